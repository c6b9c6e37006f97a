"""
Per-group test accuracy of a trained checkpoint, for the paper-1 runs whose single number hides structure:

  decimal addition: accuracy per answer digit (a digit's position is either solved or at chance for MixiT).
  k-hop:  accuracy per number of hops k, beside the rate of "copy the current character" (the answer for k = 0,
          a rule any model finds first) on the same scored positions, and how often the model's answer is
          the current character.
  Dyck-1: accuracy per string length, beside the counting baseline ("balanced iff as many ( as )",
          tasks.dyck1_counting_baseline), and the share of the training stream at that length that training
          never sees: without train_on_test, train.py trains on fresh samples minus the test set, and the
          4,000 test strings include every short string, so those lengths are never trained on; the paper-1
          configs set train_on_test, as the authors' stream, and the share is 0. Then accuracy per kind of
          string: balanced, as many ( as ) with a prefix below 0 (the counting rule's errors), unequal counts.
          Last, each distinct test string of at most 4 characters: a few of them ((), (()), ()()) recur
          dozens of times in the test set and, without train_on_test, never in training.

    python -m experiments.paper1.breakdown out/cpu/khop_standard/ckpt.pt \
        --save=results/paper1/khop_standard/breakdown.json

The test set is rebuilt from the checkpoint's own config (runconfig.make_task), so it is the set its log.jsonl
reports on; a ckpt.pt of the trained weights only (checkpoint_frozen=False, the paper-size universal runs) has
its frozen weights rebuilt from that config (checkpoint.model_from_checkpoint; paper 2's construction by
universal.write_construction). Prints a table and, with --save=FILE.json, writes it as JSON (tables.py reads it). A
missing or foreign checkpoint is one `error:` line (exit 2).
"""

import json
import sys

import numpy as np
import torch

import tasks
from checkpoint import load_checkpoint, model_from_checkpoint
from runconfig import make_task
from universal import write_construction


def predictions(model, x, y, batch=256):
    out = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            logits, _ = model(torch.as_tensor(x[i:i + batch]), torch.as_tensor(y[i:i + batch]))
            out.append(logits.argmax(-1).numpy())
    return np.concatenate(out)


def khop_breakdown(pred, x, y):
    """Rows per k: scored positions (target a character), accuracy, copy rate (target == current character),
    and the share of the model's answers that are the current character."""
    lo, hi = tasks.KHOP_CHARS, tasks.KHOP_CHARS + 4
    k = x[:, 0]
    current = np.concatenate([np.full((len(x), 1), -1), x[:, 1:]], axis=1)   # the character at each position
    mask = (y >= lo) & (y < hi)
    rows = []
    for kk in np.unique(k):
        m = mask & (k == kk)[:, None]
        n = int(m.sum())
        if n == 0:
            continue
        rows.append(dict(k=int(kk), sequences=int((k == kk).sum()), positions=n,
                         acc=float((pred[m] == y[m]).mean()), copy_rate=float((current[m] == y[m]).mean()),
                         model_copies=float((pred[m] == current[m]).mean())))
    m = mask
    total = dict(k='all', sequences=len(x), positions=int(m.sum()), acc=float((pred[m] == y[m]).mean()),
                 copy_rate=float((current[m] == y[m]).mean()), model_copies=float((pred[m] == current[m]).mean()))
    return rows + [total]


def dyck1_breakdown(pred, x, y, task, n_stream=20_000):
    """Rows per string length (the scored position is the ?): accuracy, the counting baseline, and the share
    of the task's stream at that length that training never sees because the string is a test row (measured
    on n_stream fresh samples; 0 with task.train_on_test)."""
    rows_i, cols = np.nonzero(y >= 0)
    xs, ys = task.sample(np.random.default_rng(12345), n_stream)
    stream_len = np.nonzero(ys >= 0)[1]
    test_rows = set(map(bytes, x))
    excluded = np.array([bytes(r) in test_rows and not task.train_on_test for r in xs])
    ok = pred[rows_i, cols] == y[rows_i, cols]
    groups = [(1, 2), (2, 3), (3, 5), (5, 11), (11, 21), (21, 31), (31, 41), (41, 61)]
    out = []
    for lo, hi in groups:
        sel = (cols >= lo) & (cols < hi)
        if sel.any():
            r = rows_i[sel]
            out.append(dict(length=f"{lo}" if hi == lo + 1 else f"{lo}-{hi - 1}", strings=int(sel.sum()),
                            acc=float(ok[sel].mean()),
                            counting=tasks.dyck1_counting_baseline(x[r], y[r], task.labels),
                            untrained=float(excluded[(stream_len >= lo) & (stream_len < hi)].mean())))
    out.append(dict(length='all', strings=len(cols), acc=float(ok.mean()),
                    counting=tasks.dyck1_counting_baseline(x, y, task.labels), untrained=float(excluded.mean())))
    return out


def dyck1_short_strings(pred, x, y, max_len=4):
    """Rows per distinct test string of at most max_len characters, in order of length then text: the string,
    whether it is balanced, how often the test set holds it, and the accuracy on it."""
    rows_i, cols = np.nonzero(y >= 0)
    short = cols <= max_len                                            # the ? at column = the string's length
    rows_i, cols = rows_i[short], cols[short]
    ok = pred[rows_i, cols] == y[rows_i, cols]
    text = np.array([''.join('(' if t == tasks.OPEN else ')' for t in x[r, :c]) for r, c in zip(rows_i, cols)])
    balanced = tasks.is_balanced(x[rows_i], cols)
    out = []
    for t in sorted(set(text), key=lambda t: (len(t), t)):
        sel = text == t
        out.append(dict(string=t, balanced=bool(balanced[sel][0]), strings=int(sel.sum()), acc=float(ok[sel].mean())))
    return out


def dyck1_kinds(pred, x, y):
    """Rows per kind of string: balanced; as many ( as ) but a prefix with more ) (the counting rule's only
    errors); unequal counts. Accuracy on each says whether a model counts and whether it checks prefixes."""
    rows_i, cols = np.nonzero(y >= 0)
    s = x[rows_i]                                                      # the string: what precedes column cols
    upto = np.arange(x.shape[1]) < cols[:, None]
    equal = ((s == tasks.OPEN) & upto).sum(1) == ((s == tasks.CLOSE) & upto).sum(1)
    kind = np.where(tasks.is_balanced(s, cols), 0, np.where(equal, 1, 2))
    ok = pred[rows_i, cols] == y[rows_i, cols]
    names = ('balanced', 'equal counts, a prefix below 0', 'unequal counts')
    return [dict(kind=names[k], strings=int((kind == k).sum()), acc=float(ok[kind == k].mean()))
            for k in range(3) if (kind == k).any()]


def addition_breakdown(pred, y):
    """Rows per answer digit (the i-th scored position of every sum, least-significant first): accuracy. A model
    that solves a digit's position is exact there; one that does not is at chance (10%)."""
    rows_i, cols = np.nonzero(y >= 0)
    first = np.argmax(y >= 0, axis=1)[rows_i]                            # each sum's first scored column
    digit = cols - first
    ok = pred[rows_i, cols] == y[rows_i, cols]
    return [dict(digit=int(d) + 1, positions=int((digit == d).sum()), acc=float(ok[digit == d].mean()))
            for d in np.unique(digit)] + [dict(digit='all', positions=len(ok), acc=float(ok.mean()))]


def main(ckpt_path, save=''):
    ck = load_checkpoint(ckpt_path, keys=('model', 'model_args', 'config'), trained_only=True)
    model = model_from_checkpoint(ck, ckpt_path, construct=write_construction)
    config = ck['config']
    task = make_task(config)
    x, y = task.eval_set()
    pred = predictions(model, x, y)
    if config['task'] == 'khop':
        rows = khop_breakdown(pred, x, y)
        print(f"{'k':>4} {'seqs':>5} {'positions':>9} {'accuracy':>9} {'copy rate':>9} {'model copies':>12}")
        for r in rows:
            print(f"{r['k']:>4} {r['sequences']:>5} {r['positions']:>9} {100 * r['acc']:9.2f} "
                  f"{100 * r['copy_rate']:9.2f} {100 * r['model_copies']:12.2f}")
    elif config['task'] == 'dyck1':
        rows = dyck1_breakdown(pred, x, y, task)
        print(f"{'length':>7} {'strings':>7} {'accuracy':>9} {'counting':>9} {'never trained':>13}")
        for r in rows:
            print(f"{r['length']:>7} {r['strings']:>7} {100 * r['acc']:9.2f} {100 * r['counting']:9.2f} "
                  f"{100 * r['untrained']:13.1f}")
        kinds = dyck1_kinds(pred, x, y)
        print(f"\n{'kind of string':>32} {'strings':>7} {'accuracy':>9}")
        for r in kinds:
            print(f"{r['kind']:>32} {r['strings']:>7} {100 * r['acc']:9.2f}")
        short = dyck1_short_strings(pred, x, y)
        print(f"\n{'string':>7} {'balanced':>8} {'strings':>7} {'accuracy':>9}")
        for r in short:
            print(f"{r['string']:>7} {'yes' if r['balanced'] else 'no':>8} {r['strings']:>7} {100 * r['acc']:9.2f}")
    elif config['task'] == 'decimal_addition':
        rows = addition_breakdown(pred, y)
        print(f"{'digit':>6} {'positions':>9} {'accuracy':>9}")
        for r in rows:
            print(f"{r['digit']:>6} {r['positions']:>9} {100 * r['acc']:9.2f}")
    else:
        raise ValueError(f"no breakdown for task {config['task']!r} (khop, dyck1, decimal_addition)")
    if save:
        with open(save, 'w') as f:
            json.dump(dict(checkpoint_iter=ck.get('iter_num'), task=config['task'],
                           variant=ck['model_args']['variant'], rows=rows,
                           **(dict(kinds=kinds, short=short) if config['task'] == 'dyck1' else {})), f, indent=1)
            f.write('\n')


if __name__ == '__main__':
    args = [a for a in sys.argv[1:] if not a.startswith('--save=')]
    saves = [a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--save=')]
    if len(args) != 1 or args[0].startswith('-'):
        print("error: usage: python -m experiments.paper1.breakdown out_dir/ckpt.pt [--save=FILE.json]",
              file=sys.stderr)
        sys.exit(2)
    try:
        main(args[0], saves[0] if saves else '')
    except (ValueError, tasks.DataError) as e:       # a missing or foreign checkpoint, data not prepared
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
