"""The faults a long run meets, and what each leaves behind (docs/runs.md#faults): nothing lost (the best weights,
the last finite checkpoint, the logs of the run in out_dir), nothing hung (a stopped process of two), nothing
silently wrong (a diverged loss, a corrupted checkpoint): one line, a non-zero exit status, and a run that
--init_from=resume continues."""

import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from test_bad_input import ROOT, TINY, assert_one_line_error, records, run_script


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def train(out, *flags, monkeypatch, capsys):
    return run_script('train.py', TINY + [f'--out_dir={out}', *flags], monkeypatch, capsys)


# ----------------------------------------------------------------------------- the best weights

def test_a_resume_never_replaces_the_best_weights_with_worse(tmp_path, monkeypatch, capsys):
    """A run stopped after writing ckpt_best.pt but before ckpt.pt (simulated: ckpt.pt's best_val_loss set back
    to inf), resumed at a learning rate that makes every later evaluation worse: ckpt_best.pt keeps the lowest
    val_loss of log.jsonl and its weights, because the resumed run reads the loss to beat from ckpt_best.pt."""
    run = str(tmp_path / 'run')
    assert train(run, '--max_iters=8', monkeypatch=monkeypatch, capsys=capsys)[0] == 0
    best_path, ckpt_path = os.path.join(run, 'ckpt_best.pt'), os.path.join(run, 'ckpt.pt')
    before = open(best_path, 'rb').read()
    ckpt = torch.load(ckpt_path, weights_only=True)
    torch.save(dict(ckpt, best_val_loss=float('inf')), ckpt_path)
    code, _, err = train(run, '--init_from=resume', '--max_iters=10', '--eval_interval=5', '--learning_rate=1',
                         monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err
    evals = records(run, 'log.jsonl')
    assert evals[-1]['iter'] == 10 and evals[-1]['val_loss'] > min(r['val_loss'] for r in evals[:-1])
    best = torch.load(best_path, weights_only=True)
    assert best['val_loss'] == min(r['val_loss'] for r in evals)
    assert open(best_path, 'rb').read() == before
