"""The text tasks end to end without network or downloaded data: a small generated text, a byte-level BPE trained on
it as an in-memory tiktoken.Encoding (GPT-2's split pattern), `text_data.prepare` into uint16 memmaps, the lm and
sentiment tasks, train.py's evaluation (a uniform model scores exactly ln V nats per token) and sample.py."""

import base64
import json
import math
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import runpy
import regex
import tiktoken
import torch

import runconfig
import tasks
import text_data
from configurator import run_command
from model import GPT, GPTConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ('the cat dog sat on a mat and it was there when we ran home , . ; the old house is near '
         "the river but they do n't know what 's going on @-@ 1 2 10 1993 = History = Ünïcode").split()


def generated_text(seed, n_lines=400):
    """Wikitext-like lines: headings, paragraphs with leading spaces, blank lines, runs of spaces, digits."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n_lines):
        kind = rng.integers(0, 6)
        words = ' '.join(rng.choice(WORDS, rng.integers(1, 15)))
        lines.append({0: f' = {words} = ', 1: '', 2: '  ' + words, 3: words + '  '}.get(kind, ' ' + words))
    return '\n'.join(lines) + '\n'


def bpe_encoding(text, n_merges=80):
    """A byte-level BPE learnt on text: 256 byte tokens, then n_merges merges, <|endoftext|> last."""
    ranks = {bytes([b]): b for b in range(256)}
    words = Counter(tuple(bytes([b]) for b in w.encode()) for w in regex.findall(text_data.GPT2_PAT, text))
    for _ in range(n_merges):
        pairs = Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[a, b] += c
        (a, b), _ = pairs.most_common(1)[0]
        ranks[a + b] = len(ranks)
        new = Counter()
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == (a, b):
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] += c
        words = new
    return tiktoken.Encoding('tiny', pat_str=text_data.GPT2_PAT, mergeable_ranks=ranks,
                             special_tokens={'<|endoftext|>': len(ranks)})


def dump_tiktoken_bpe(ranks, path):
    """The .tiktoken format: base64(token bytes) and rank per line (tiktoken's own writer needs blobfile)."""
    with open(path, 'wb') as f:
        for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
            f.write(base64.b64encode(token) + b' %d\n' % rank)


@pytest.fixture(scope='module')
def enc():
    return bpe_encoding(generated_text(0))


@pytest.fixture(scope='module')
def lm_data(enc, tmp_path_factory):
    """A prepared lm dataset: two training files in a folder, one test file."""
    root = tmp_path_factory.mktemp('lm')
    os.makedirs(root / 'texts')
    texts = {'texts/a.txt': generated_text(1), 'texts/b.txt': generated_text(2), 'held_out.txt': generated_text(3)}
    for name, t in texts.items():
        (root / name).write_text(t, encoding='utf-8')
    text_data.prepare('tiny', [str(root / 'texts')], [str(root / 'held_out.txt')], enc=enc, out_dir=str(root / 'data'))
    return root, texts


def test_local_tokenizer_file_gives_the_same_ids(enc, tmp_path):
    path = str(tmp_path / 'tiny.tiktoken')
    dump_tiktoken_bpe(enc._mergeable_ranks, path)
    loaded = text_data.encoding_from_file(path)
    text = generated_text(5)
    assert loaded.encode_ordinary(text) == enc.encode_ordinary(text)
    assert (loaded.n_vocab, loaded.eot_token) == (enc.n_vocab, enc.eot_token)
    assert len(enc.encode_ordinary(text)) < 0.6 * len(text.encode())           # the merges are used
    (tmp_path / 'bad.tiktoken').write_text('not base64 at all\n')
    with pytest.raises(text_data.DataError, match='not a .tiktoken file'):
        text_data.encoding_from_file(str(tmp_path / 'bad.tiktoken'))


def test_cutting_text_into_pieces_keeps_the_encoding(enc):
    text = generated_text(6) + 'a\n\nB\n \n  x\n\n\n y\nz'
    pieces = list(text_data.exact_pieces([text[i:i + 100] for i in range(0, len(text), 100)], size=300))
    assert len(pieces) > 20 and ''.join(pieces) == text
    assert sum((enc.encode_ordinary(p) for p in pieces), []) == enc.encode_ordinary(text)


def test_prepare_lm_memmap_round_trip_and_rerun(enc, lm_data, capsys):
    root, texts = lm_data
    data = root / 'data'
    train = np.memmap(data / 'train.bin', dtype=np.uint16, mode='r')
    test = np.memmap(data / 'test.bin', dtype=np.uint16, mode='r')
    want = enc.encode_ordinary(texts['texts/a.txt']) + [enc.eot_token] + enc.encode_ordinary(texts['texts/b.txt']) + [
        enc.eot_token]
    assert train.tolist() == want
    assert test.tolist() == enc.encode_ordinary(texts['held_out.txt']) + [enc.eot_token]
    meta = json.load(open(data / 'meta.json'))
    assert meta['splits'] == {'train': {'tokens': len(want), 'documents': 2},
                              'test': {'tokens': len(test), 'documents': 1}}
    assert (meta['vocab_size'], meta['eot'], meta['task']) == (enc.n_vocab, enc.eot_token, 'lm')
    # finished splits are skipped; a half-written .tmp is never taken for a finished file
    mtime = os.path.getmtime(data / 'train.bin')
    os.remove(data / 'test.bin')
    (data / 'test.bin.tmp').write_bytes(b'\x00' * 10)
    text_data.prepare('tiny', [str(root / 'texts')], [str(root / 'held_out.txt')], enc=enc, out_dir=str(data))
    assert 'done already' in capsys.readouterr().out
    assert os.path.getmtime(data / 'train.bin') == mtime and not os.path.exists(data / 'test.bin.tmp')
    assert np.fromfile(data / 'test.bin', dtype=np.uint16).tolist() == test.tolist()


def test_hugging_face_splits_cut_from_one_stream_read_it_once(enc, tmp_path, monkeypatch):
    """fineweb-edu's test rows follow its training rows in one streamed split: prepare reads the stream once, and
    each split gets its own rows."""
    docs = [f'document {i} ' + generated_text(i, n_lines=3) for i in range(10)]
    opened = []

    def hf_rows(path, config, split, lo, hi):
        opened.append((split, lo, hi))
        return iter([{'text': d} for d in docs[lo:hi]])
    monkeypatch.setattr(text_data, 'hf_rows', hf_rows)
    monkeypatch.setitem(text_data.HF_DATASETS, 'stream', ('lm', 'org/stream', None,
                                                      {'train': ('train', 0, 7), 'test': ('train', 7, 9)}))
    meta = text_data.prepare('stream', out_dir=str(tmp_path), enc=enc, num_proc=1)
    assert opened == [('train', 0, None)]
    for split, rows in (('train', docs[:7]), ('test', docs[7:9])):
        tokens = np.fromfile(tmp_path / f'{split}.bin', dtype=np.uint16).tolist()
        assert tokens == [t for d in rows for t in enc.encode_ordinary(d) + [enc.eot_token]]
        assert meta['splits'][split]['documents'] == len(rows)


def test_lm_windows(lm_data):
    data = str(lm_data[0] / 'data')
    tokens = np.fromfile(os.path.join(data, 'test.bin'), dtype=np.uint16).astype(np.int64)
    train = np.fromfile(os.path.join(data, 'train.bin'), dtype=np.uint16).astype(np.int64)
    task = tasks.make_task('lm', data_dir=data, block_size=16)
    x, y = task.test
    assert x.shape[1] == 16 and x.shape[0] == -(-(len(tokens) - 1) // 16)
    assert y[y >= 0].tolist() == tokens[1:].tolist()                  # every test token but the first, once
    assert x[y >= 0].tolist() == tokens[:-1].tolist()                  # each predicted from its predecessor
    bx, by = task.get_batch(8, np.random.default_rng(0))
    assert bx.shape == by.shape == (8, 16) and (bx[:, 1:] == by[:, :-1]).all()
    sx, _ = task.sample(np.random.default_rng(0), 8)                  # the test split is another text: training
    assert task.train_on_test and (sx == bx).all()                     # windows are not checked against it
    for row in bx:                                                     # windows of the training text
        assert any((train[i:i + 16] == row).all() for i in np.flatnonzero(train == row[0]))
    for rows in (slice(0, 3), slice(3, 8)):                           # a process's share of the batch, read alone
        rx, ry = task.get_batch(8, np.random.default_rng(0), rows=rows)
        assert (rx == bx[rows]).all() and (ry == by[rows]).all()
    compact = tasks.make_task('lm', data_dir=data, block_size=16, compact_vocab=True)
    ids = compact.token_ids
    assert compact.vocab_size == len(ids) < task.vocab_size
    cx, cy = compact.test
    scored = y >= 0
    assert (cy >= 0).sum() == scored.sum()
    assert (ids[cx[scored]] == x[scored]).all() and (ids[cy[scored]] == y[scored]).all()


def run_script(script, args, monkeypatch):
    """Run train.py / sample.py in this process (no second torch import): returns its exit code (0 if it
    returned)."""
    monkeypatch.setattr(sys, 'argv', [script, *args])
    monkeypatch.chdir(ROOT)
    try:
        runpy.run_path(os.path.join(ROOT, script), run_name='__main__')
    except SystemExit as e:
        return e.code
    return 0


TINY = ['--n_layer=1', '--n_head=2', '--n_embd=32', '--batch_size=16', '--compile=False', '--dtype=float32',
        '--device=cpu', '--log_interval=1', '--eval_iters=1', '--warmup_iters=2']


@pytest.mark.parametrize('compact', [False, True])
def test_uniform_model_test_log_perplexity_is_ln_V(lm_data, tmp_path, compact, monkeypatch):
    """train.py's evaluation of a model whose logits are all equal: ln V nats on every test token."""
    data = str(lm_data[0] / 'data')
    task = tasks.make_task('lm', data_dir=data, block_size=16, compact_vocab=compact)
    model = GPT(GPTConfig(vocab_size=task.vocab_size, block_size=16, n_layer=1, n_head=2, n_embd=32))
    torch.nn.init.zeros_(model.lm_head.weight)
    torch.save(model.state_dict(), tmp_path / 'uniform.pt')
    assert run_script('train.py', TINY + ['--task=lm', f'--lm_data_dir={data}', '--block_size=16',
                      f'--lm_compact_vocab={compact}', '--max_iters=0', f'--init_from={tmp_path / "uniform.pt"}',
                      f'--out_dir={tmp_path / "out"}'], monkeypatch) == 0
    record = json.loads(open(tmp_path / 'out' / 'log.jsonl').readline())
    assert record['val_loss'] == pytest.approx(math.log(task.vocab_size), rel=1e-6)


def test_an_lm_run_of_the_older_sequence_length_key_resumes(lm_data, tmp_path, monkeypatch):
    """A checkpoint whose saved config has lm_block_size=16 and block_size=0 (the sequence length's older key,
    configurator.RENAMED) resumes with windows of 16, as it trained."""
    data, out = str(lm_data[0] / 'data'), str(tmp_path / 'out')
    flags = TINY + ['--task=lm', f'--lm_data_dir={data}', f'--out_dir={out}', '--eval_interval=2']
    assert run_script('train.py', flags + ['--block_size=16', '--max_iters=2'], monkeypatch) == 0
    path = os.path.join(out, 'ckpt.pt')
    ckpt = torch.load(path, weights_only=True)
    ckpt['config'] = dict({k: v for k, v in ckpt['config'].items() if k != 'block_size'}, block_size=0,
                          lm_block_size=16)
    ckpt.pop('sha256')
    torch.save(ckpt, path)
    assert run_script('train.py', flags + ['--init_from=resume', '--max_iters=4'], monkeypatch) == 0
    assert [json.loads(line)['iter'] for line in open(os.path.join(out, 'log.jsonl'))] == [0, 2, 4]


def test_train_lm_then_sample(enc, lm_data, tmp_path, monkeypatch, capsys):
    root, _ = lm_data
    data = str(root / 'data')
    out = str(tmp_path / 'out')
    assert run_script('train.py', TINY + ['--task=lm', f'--lm_data_dir={data}', '--block_size=32', '--max_iters=40',
                      '--eval_interval=40', '--learning_rate=1e-2', f'--out_dir={out}'], monkeypatch) == 0
    records = [json.loads(line) for line in open(os.path.join(out, 'log.jsonl'))]
    assert records[-1]['val_loss'] < math.log(enc.n_vocab) - 1.5        # it learnt the text's statistics
    tok = str(tmp_path / 'tiny.tiktoken')
    dump_tiktoken_bpe(enc._mergeable_ranks, tok)
    capsys.readouterr()
    assert run_script('sample.py', [f'--out_dir={out}', f'--tokenizer={tok}', '--start=the cat', '--num_samples=2',
                                    '--max_new_tokens=20'], monkeypatch) == 0
    samples = capsys.readouterr().out.split('---------------')
    assert len(samples) == 3 and all(s.strip().startswith('the cat') for s in samples[:2])
    # MixiT cannot see past its block_size: a one-line error, not a traceback
    mixit = GPTConfig(vocab_size=enc.n_vocab, block_size=32, n_layer=1, n_head=2, n_embd=32, variant='mixit')
    os.makedirs(tmp_path / 'mixit')
    torch.save(dict(model=GPT(mixit).state_dict(), model_args=dict(mixit.to_keys(), variant='mixit'),
                    config=dict(task='lm', lm_data_dir=data, lm_compact_vocab=False)), tmp_path / 'mixit' / 'ckpt.pt')
    assert run_script('sample.py', [f'--out_dir={tmp_path / "mixit"}', f'--tokenizer={tok}', '--max_new_tokens=40'],
                      monkeypatch) == 2
    err = capsys.readouterr().err.strip()
    assert 'context of 32 tokens' in err and len(err.splitlines()) == 1, err


def test_shakespeare_char_prepare_train_sample(tmp_path, monkeypatch, capsys):
    """The README's three commands offline, on a small text the test writes: prepare shakespeare_char from a
    local file (characters as tokens, the last 10% held out), train config/cpu/shakespeare_char.py briefly, and
    sample text that begins with the prompt and uses only the text's characters."""
    text = generated_text(3, n_lines=1500).replace(' = ', '\nROMEO:\n')
    (tmp_path / 'input.txt').write_text(text, encoding='utf-8')
    data, out = str(tmp_path / 'data'), str(tmp_path / 'out')
    run_command(dict(prepare=text_data.prepare_command),        # a stand-in, far smaller than the real text
                ['prepare', 'shakespeare_char', f'--input={tmp_path / "input.txt"}', f'--out_dir={data}', '--force'])
    meta = json.load(open(os.path.join(data, 'meta.json')))
    assert meta['tokenizer'] == 'char' and meta['chars'] == ''.join(sorted(set(text)))
    assert meta['vocab_size'] == len(set(text)) + 1 and meta['eot'] == len(set(text))
    enc = text_data.encoding_of(meta)
    tokens = [np.fromfile(os.path.join(data, f'{s}.bin'), dtype=np.uint16) for s in ('train', 'test')]
    assert enc.decode(tokens[0][:-1].tolist()) + enc.decode(tokens[1][:-1].tolist()) == text  # exact, eot-ended
    assert 0.09 < len(tokens[1]) / len(text) < 0.11
    assert run_script('train.py', ['config/cpu/shakespeare_char.py', f'--lm_data_dir={data}', f'--out_dir={out}',
                                   '--n_layer=1', '--n_embd=32', '--n_head=2', '--batch_size=8', '--max_iters=60',
                                   '--warmup_iters=5', '--learning_rate=1e-2', '--eval_interval=60', '--n_test=20',
                                   '--dtype=float32'], monkeypatch) == 0
    records = [json.loads(line) for line in open(os.path.join(out, 'log.jsonl'))]
    assert records[-1]['val_loss'] < math.log(meta['vocab_size']) - 1.0       # it learnt the characters' statistics
    capsys.readouterr()
    assert run_script('sample.py', [f'--out_dir={out}', '--start=ROMEO:', '--num_samples=2',
                                    '--max_new_tokens=50'], monkeypatch) == 0
    samples = capsys.readouterr().out.split('---------------')[:2]
    assert all(s.strip().startswith('ROMEO:') and set(s.strip()) <= set(text) for s in samples), samples
    assert run_script('sample.py', [f'--out_dir={out}', '--start=ROMEO: §'], monkeypatch) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('error: --start:') and "'§'" in err and len(err.splitlines()) == 1, err


def write_labelled(root):
    """The three local labelled formats: IMDb CSV, Yelp-sentences *.0 / *.1, and '<label> <text>' lines."""
    os.makedirs(root / 'sentences')
    (root / 'sentences' / 'sentiment.dev.0').write_text('the food was bad\nwe do n\'t like it\n')
    (root / 'sentences' / 'sentiment.dev.1').write_text('the cat sat on a mat and it was good\n')
    (root / 'sentences' / 'sentiment.test.0').write_text('bad\n')
    (root / 'sentences' / 'sentiment.test.1').write_text('good good\n')
    (root / 'reviews_train.csv').write_text('label,rating,id,text\n1,9,0,"great, ""really"" great<br />fun"\n'
                                            '0,2,1,"the old house is near the river but they do n\'t know"\n')
    (root / 'lines.txt').write_text('1 the dog ran home\n0 it was there when we ran\n')


def test_sentiment_batching_and_padding(enc, tmp_path):
    write_labelled(tmp_path)
    data = str(tmp_path / 'data')
    text_data.prepare('s', [str(tmp_path / f) for f in ('sentences', 'reviews_train.csv', 'lines.txt')],
                      task='sentiment', enc=enc, out_dir=data)
    docs = {s: np.load(os.path.join(data, f'{s}.docs.npy')) for s in ('train', 'test')}
    assert docs['train'][:, 2].tolist() == [0, 0, 1, 1, 0, 1, 0] and docs['test'][:, 2].tolist() == [0, 1]
    tokens = np.fromfile(os.path.join(data, 'train.bin'), dtype=np.uint16)
    start, end, _ = docs['train'][4]
    assert enc.decode(tokens[start:end].tolist()) == "the old house is near the river but they do n't know"

    T = 6
    task = tasks.make_task('sentiment', data_dir=data, block_size=T, padding='right')
    x, y = task.test                                             # sorted by length: 'bad', then 'good good'
    ids = [enc.encode_ordinary(t) for t in ('bad', 'good good')]
    n = [min(len(i), T) for i in ids]
    assert len(ids[1]) > T                                       # 'good good' is truncated to T tokens
    for row, k, label in zip(range(2), n, (0, 1)):
        assert x[row, :k].tolist() == ids[row][:k]
        assert (x[row, k:] == enc.eot_token).all()              # right-padded with <|endoftext|>
        assert y[row].tolist() == [-1] * (k - 1) + [label] + [-1] * (T - k)
    rng = np.random.default_rng(0)
    bx, by = task.get_batch(64, rng)
    assert bx.shape == (64, T) and ((by >= 0).sum(1) == 1).all()
    long = np.flatnonzero(docs['train'][:, 1] - docs['train'][:, 0] > T)
    assert len(long) and (by[:, T - 1] >= 0).any()               # long texts: truncated, label at the last slot
    n_docs, rows = task.train_split                              # an epoch: every training text once
    ex, ey = task.epoch_batch(n_docs, 0, seed=0)
    tx, ty = rows(np.arange(n_docs))
    assert n_docs == len(docs['train'])
    assert sorted(zip(map(bytes, ex), map(bytes, ey))) == sorted(zip(map(bytes, tx), map(bytes, ty)))
    cx, cy = tasks.crop_unscored(x, y)
    assert cx.shape == (2, max(n)) and (cy >= 0).sum() == 2
    y0 = np.where(np.arange(2)[:, None] == 0, y, -1)             # row 0 only: scored up to its length n[0] < T
    assert n[0] + 1 < T and tasks.crop_unscored(x, y0)[0].shape == (2, n[0])
    cx, cy = tasks.crop_unscored(x, y0, n[0] + 1)                 # rounded up to a multiple of n[0] + 1
    assert np.array_equal(cx, x[:, :n[0] + 1]) and np.array_equal(cy, y0[:, :n[0] + 1])
    assert tasks.crop_unscored(x, y0, T + 1)[0].shape == (2, T)   # at most T
    pred = np.where(y >= 0, np.array([[0], [0]]), 7)
    assert task.score(pred, y)['acc'] == (1, 2)                  # accuracy counts the label positions only

    lx, ly = tasks.make_task('sentiment', data_dir=data, block_size=T).test
    for row, k, label in zip(range(2), n, (0, 1)):               # the default, the authors': text ends at T-1
        assert lx[row, T - k:].tolist() == ids[row][:k] and (lx[row, :T - k] == enc.eot_token).all()
        assert ly[row].tolist() == [-1] * (T - 1) + [label]
    with pytest.raises(ValueError, match='padding'):
        tasks.make_task('sentiment', data_dir=data, block_size=T, padding='middle')


def test_sentiment_as_the_authors_classifier(enc, tmp_path):
    """label='class', bos=True: <|endoftext|> at position 0, the text, then a pad token of its own; the target
    is the class index at the last text token; the model's head has n_class outputs and the pad a frozen row."""
    write_labelled(tmp_path)
    data = str(tmp_path / 'data')
    text_data.prepare('s', [str(tmp_path / f) for f in ('sentences', 'reviews_train.csv', 'lines.txt')],
                      task='sentiment', enc=enc, out_dir=data)
    T = 6
    task = tasks.make_task('sentiment', data_dir=data, block_size=T, padding='right', label='class', bos=True)
    assert task.n_class == 2 and task.pad_id == enc.n_vocab and task.vocab_size == enc.n_vocab + 1
    x, y = task.test
    ids = [enc.encode_ordinary(t) for t in ('bad', 'good good')]
    for row, label in zip(range(2), (0, 1)):
        k = min(len(ids[row]), T - 1)                                # the text after the BOS, truncated
        assert x[row, 0] == enc.eot_token and x[row, 1:1 + k].tolist() == ids[row][:k]
        assert (x[row, 1 + k:] == task.pad_id).all()
        assert y[row].tolist() == [-1] * k + [label] + [-1] * (T - 1 - k)
    compact = tasks.make_task('sentiment', data_dir=data, block_size=T, padding='right', label='class', bos=True,
                              compact_vocab=True)
    assert compact.pad_id == compact.vocab_size - 1 and compact.test[1].max() == 1
    args = runconfig.model_args(dict(n_layer=1, n_head=2, n_embd=8, causal=False), task)
    assert (args['n_class'], args['pad_id'], args['block_size']) == (2, task.pad_id, T)
    with pytest.raises(ValueError, match='n_class'):                    # the task's to set, not a config's
        runconfig.model_args(dict(n_layer=1, n_head=2, n_embd=8, n_class=3), task)
    with pytest.raises(ValueError, match='label'):
        tasks.make_task('sentiment', data_dir=data, block_size=T, label='word')


def test_errors_are_one_line(tmp_path, capsys):
    (tmp_path / 'bad.txt').write_text('positive this has no integer label\n')
    (tmp_path / 'bad.csv').write_text('stars,review\n5,nice\n')
    (tmp_path / 'some.txt').write_text('1 a review that is good enough\n0 one that is not\n' * 4)
    r = subprocess.run([sys.executable, 'tasks.py', 'prepare', 'nope'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: unknown dataset 'nope': choose wikitext103, wikitext2, fineweb_edu, yelp, imdb, shakespeare_char, or "
        "give local files with --input=<files>"]
    cases = [(['prepare', 'x', f'--input={tmp_path / "missing.txt"}'], 'input not found'),
             (['prepare', 'x', '--task=sentiment', f'--input={tmp_path / "some.txt"}', '--test_fraction=0.5',
               f'--tokenizer={tmp_path / "bad.txt"}'], 'not a .tiktoken file')]
    for args, message in cases:
        with pytest.raises(SystemExit) as e:
            run_command(dict(prepare=text_data.prepare_command), args)
        err = capsys.readouterr().err.strip()
        assert e.value.code == 2 and message in err and len(err.splitlines()) == 1, err
    with pytest.raises(text_data.DataError, match='line 1'):
        text_data.read_labelled(str(tmp_path / 'bad.txt'))
    with pytest.raises(text_data.DataError, match="'label' and 'text'"):
        text_data.read_labelled(str(tmp_path / 'bad.csv'))
    with pytest.raises(ValueError, match=f'no prepared data.*prepare nothing --out_dir={tmp_path / "nothing"} '):
        tasks.make_task('lm', data_dir=str(tmp_path / 'nothing'))   # the command that writes where it reads


def test_tasks_and_text_data_import_without_the_command_line():
    """The command-line layer (configurator) loads only when a script runs as a command; `python text_data.py
    prepare` is `python tasks.py prepare`."""
    code = "import sys, tasks, text_data; assert 'configurator' not in sys.modules"
    assert subprocess.run([sys.executable, '-c', code], cwd=ROOT).returncode == 0
    r = subprocess.run([sys.executable, 'text_data.py', 'prepare', 'nope'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("error: unknown dataset 'nope'") and r.stderr.count('\n') == 1


def test_relative_data_dir_is_found_from_anywhere(tmp_path, monkeypatch):
    """lm_data_dir='data/x' reads ./data/x where it exists, else the repository's data/x."""
    monkeypatch.setattr(text_data, 'DATA_DIR', str(tmp_path / 'repo' / 'data'))
    os.makedirs(tmp_path / 'repo' / 'data' / 'x')
    os.makedirs(tmp_path / 'elsewhere')
    monkeypatch.chdir(tmp_path / 'elsewhere')
    assert text_data.data_path('data/x') == str(tmp_path / 'repo' / 'data' / 'x')
    assert text_data.data_path('data/y') == 'data/y'                       # nowhere: as given, for the error
    os.makedirs(tmp_path / 'elsewhere' / 'data' / 'x')
    assert text_data.data_path('data/x') == 'data/x'                       # the working directory's first


def test_prepare_checks_what_it_was_given(tmp_path, capsys):
    """A named dataset's input far from its known size is refused unless --force (a 585-byte README given as Tiny
    Shakespeare); one of about the right size but other bytes is noted; a near-empty input for a named dataset is
    refused always."""
    readme = tmp_path / 'README.md'
    readme.write_text('Tiny Shakespeare, 40,000 lines of Shakespeare. ' * 12)
    go = lambda *a: run_command(dict(prepare=text_data.prepare_command),
                                ['prepare', 'shakespeare_char', f'--out_dir={tmp_path / "d"}', *a])
    with pytest.raises(SystemExit) as e:
        go(f'--input={readme}')
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "where shakespeare_char's text is 1,115,394" in err[0]
    assert 'pass --force' in err[0]
    go(f'--input={readme}', '--force')                          # the user's say-so
    near = tmp_path / 'near.txt'
    near.write_text('x' * (1_115_394 - 1000))
    go(f'--input={near}', '--force')
    assert 'is not the known shakespeare_char text' in capsys.readouterr().err
    empty = tmp_path / 'empty.txt'
    empty.write_text('hi\n')
    for name in ('shakespeare_char', 'wikitext2'):
        with pytest.raises(SystemExit):
            run_command(dict(prepare=text_data.prepare_command),
                        ['prepare', name, f'--input={empty}', f'--out_dir={tmp_path / name}', '--force'])
        assert 'nothing to prepare' in capsys.readouterr().err
