"""checkpoint.py: a run's files written whole or not at all, every failure one line naming the file and its cause,
and a checkpoint read once, whatever replaces it meanwhile."""

import errno
import os

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
