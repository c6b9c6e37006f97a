"""checkpoint.py: a run's files written whole or not at all, every failure one line naming the file and its cause,
and a checkpoint read once, whatever replaces it meanwhile."""

import errno
import json
import os
import shutil

import pytest
import torch

import checkpoint
from model import GPT, GPTConfig
from test_files import inject


def tiny():
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=16))


@pytest.mark.parametrize('code, shown', [(errno.ENOSPC, 'ENOSPC (No space left on device)'),
                                         (errno.EFBIG, 'EFBIG (File too large)')])
def test_a_failed_checkpoint_write_keeps_the_last_one(code, shown, tmp_path, monkeypatch, capsys):
    path = str(tmp_path / 'ckpt.pt')
    checkpoint.save(path, tiny(), iter_num=1)
    before = open(path, 'rb').read()
    inject(monkeypatch, __import__('files'), at=2, code=code)
    with pytest.raises(SystemExit) as e:
        checkpoint.save(path, tiny(), iter_num=2)
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and err == [f"error: cannot write {path}: {shown}; ckpt.pt is as before"]
    assert open(path, 'rb').read() == before and not os.path.exists(path + '.tmp')


def test_an_io_error_reading_a_checkpoint_is_not_called_truncated(tmp_path, monkeypatch):
    path = str(tmp_path / 'ckpt.pt')
    checkpoint.save(path, tiny(), iter_num=1)
    real = torch.load

    def load(f, *args, **kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(torch, 'load', load)
    with pytest.raises(ValueError, match=r'cannot read .*ckpt.pt: EIO \(Input/output error\)'):
        checkpoint.load_checkpoint(path, keys=('model',))
    monkeypatch.setattr(torch, 'load', real)
    assert checkpoint.load_checkpoint(path, keys=('model',))['iter_num'] == 1


def test_a_checkpoint_replaced_while_it_is_read_is_read_whole(tmp_path, monkeypatch):
    """A reader opens the file once: a run that replaces ckpt.pt between the reader's open and its read (os.replace
    is atomic) leaves the reader with the old file, whole and checked, never a mix reported as corrupted."""
    path = str(tmp_path / 'ckpt.pt')
    checkpoint.save(path, tiny(), iter_num=1)
    real = torch.load

    def load(f, *args, **kwargs):                      # the run saves a new checkpoint right after the open
        torch.manual_seed(1)
        model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=16))
        checkpoint.save(path, model, iter_num=2)
        return real(f, *args, **kwargs)

    monkeypatch.setattr(torch, 'load', load)
    assert checkpoint.load_checkpoint(path, keys=('model',))['iter_num'] == 1
    monkeypatch.setattr(torch, 'load', real)
    assert checkpoint.load_checkpoint(path, keys=('model',))['iter_num'] == 2


def test_a_checkpoint_from_elsewhere_is_checked_as_a_config_file(tmp_path, monkeypatch, capsys):
    """A checkpoint whose model has a field this model.py lacks, or whose model_args or saved config hold a value of
    the wrong type or range (a key the command line does not set, which the run takes from the checkpoint): one
    line naming the file and the value, in train.py (resume) and checkpoint.gpt_config; never a traceback, never
    accepted."""
    from test_bad_input import TINY, run_script
    run = str(tmp_path / 'run')
    assert run_script('train.py', TINY + ['--max_iters=2', f'--out_dir={run}'], monkeypatch, capsys)[0] == 0
    path = os.path.join(run, 'ckpt.pt')
    good = torch.load(path, weights_only=True)
    cases = [(dict(model_args=dict(good['model_args'], n_kv_head=2)), 'n_kv_head that this model.py'),
             (dict(model_args=dict(good['model_args'], n_layer='two')), 'n_layer expects int'),
             (dict(model_args=dict(good['model_args'], norm='batch')), "norm must be"),
             (dict(config=dict(good['config'], weight_decay='heavy')), 'weight_decay expects float'),
             (dict(config=dict(good['config'], weight_decay=-1.0)), '--weight_decay must be >= 0'),
             (dict(config=dict(good['config'], beta1=2.0)), '--beta1 must be in [0, 1)')]
    for change, message in cases:
        bad = dict(good, **change)
        bad.pop('sha256')
        torch.save(bad, path)
        code, _, err = run_script('train.py', TINY + ['--max_iters=3', f'--out_dir={run}', '--init_from=resume'],
                                  monkeypatch, capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and message in lines[0], (change, err)
        if 'model_args' in change:
            with pytest.raises(ValueError, match=message):
                checkpoint.gpt_config(bad['model_args'], path)


def test_a_run_whose_model_args_use_older_value_names_loads_and_resumes(tmp_path, monkeypatch, capsys):
    """tests/fixtures/old_mixit_run (README.md there): a MixiT run whose model_args name the authors' block and scale
    'code', the older name of 'authors', beside flat keys of the authors' group (mixit_seed 3, base_width 4,
    skip_scaling 0.6, ...). Its model gives the logits it gave when it was written, bit for bit, and the run resumes
    to the evaluation it reached then."""
    from test_bad_input import run_script
    old = os.path.join(os.path.dirname(__file__), 'fixtures', 'old_mixit_run')
    with open(os.path.join(old, 'expected.json')) as f:
        expected = json.load(f)
    path = os.path.join(old, 'ckpt.pt')
    ckpt = checkpoint.load_checkpoint(path, keys=('model', 'model_args', 'config'), trained_only=True)
    assert ckpt['model_args']['mixit_block'] == ckpt['model_args']['mixit_scale'] == 'code'
    model = checkpoint.model_from_checkpoint(ckpt, path)
    assert (model.config.authors.mixit_block, model.config.authors.mixit_seed) == ('authors', 3)
    idx = torch.tensor(expected['idx'])
    with torch.no_grad():
        logits, _ = model(idx, torch.zeros_like(idx))
    assert torch.equal(logits, torch.tensor(expected['logits']))
    run = str(tmp_path / 'run')
    shutil.copytree(old, run)
    code, _, err = run_script('train.py', ['--init_from=resume', f'--out_dir={run}', '--max_iters=4',
                                           '--eval_interval=4'], monkeypatch, capsys)
    assert code == 0, err
    _, last = list(checkpoint.log_records(os.path.join(run, 'log.jsonl')))[-1]
    assert {k: last[k] for k in expected['resumed']} == expected['resumed']
