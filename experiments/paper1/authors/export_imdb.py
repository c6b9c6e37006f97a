"""Export the IMDb token ids our committed runs train and test on (config/cpu/imdb_*.py: tasks.sentiment with
<|endoftext|> first, the review's first 255 GPT-2 tokens, right-padded to 256 with a pad token of its own,
compact vocabulary, class labels; test = the task_seed-0 2,000 of the 25,000 test reviews) for the authors'
classifier (trainer_classifier.py, patched by results/paper1/authors/patch.diff to read them as task
`imdb_local`), so both sides see the same token ids. Runs with this repository's python, from its root:
    python -m experiments.paper1.authors.export_imdb out/authors/imdb_256.npz
Writes train_x (25000, 256), train_y (25000,), test_x (2000, 256), test_y (2000,), pad_id, vocab_size."""

import os
import sys

import numpy as np

import tasks


class AllRows:
    """A stand-in for np.random.Generator whose integers(lo, hi, n) lists every row once, in order, so that
    the task's own sample() builds the whole training split."""

    def integers(self, lo, hi, n):
        assert n == hi - lo
        return np.arange(lo, hi)


def labels_of(y):
    """The class target of each row (the one scored position)."""
    assert ((y >= 0).sum(1) == 1).all()
    return y.max(1)


def main(out):
    # the settings of config/cpu/imdb_mixit.py and imdb_standard.py (identical data keys), task_seed 0
    task = tasks.sentiment(seed=0, n_test=2000, data_dir='data/imdb', block_size=256, compact_vocab=True,
                           padding='right', label='class', bos=True)
    n_train = len(np.load('data/imdb/train.docs.npy'))
    train_x, train_y = task.sample(AllRows(), n_train)
    test_x, test_y = task.test
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    np.savez_compressed(out, train_x=train_x.astype(np.int32), train_y=labels_of(train_y).astype(np.int64),
                        test_x=test_x.astype(np.int32), test_y=labels_of(test_y).astype(np.int64),
                        pad_id=task.pad_id, vocab_size=task.vocab_size)
    print(f"{out}: train {train_x.shape}, test {test_x.shape}, vocab {task.vocab_size}, pad {task.pad_id}, "
          f"test positive {labels_of(test_y).mean():.3f}")


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'out/authors/imdb_256.npz')
