"""Tests for prefetch.py: a worker that draws the loop's batches ahead, bounded, and one line where it cannot."""

import torch

from test_bad_input import TINY, assert_one_line_error, run_script


def test_prefetch_without_fork_is_one_line(tmp_path, monkeypatch, capsys):
    """Where processes cannot be forked (Windows), asking for a prefetching worker is one line, exit 2."""
    monkeypatch.setattr(torch.multiprocessing, 'get_all_start_methods', lambda: ['spawn'])
    assert_one_line_error(run_script('train.py', TINY + ['--prefetch=2', f'--out_dir={tmp_path}'], monkeypatch,
                                     capsys), '--prefetch=2 needs processes started by fork')


def test_prefetch_is_bounded(tmp_path, monkeypatch, capsys):
    """More batches ahead than MAX_PREFETCH would only hold memory (a huge value, every batch): one line."""
    from prefetch import MAX_PREFETCH
    assert_one_line_error(run_script('train.py', TINY + [f'--prefetch={MAX_PREFETCH + 1}', f'--out_dir={tmp_path}'],
                                     monkeypatch, capsys), f'at most {MAX_PREFETCH} batches are drawn ahead')
