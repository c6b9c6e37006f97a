"""Tests for hardware.py: the CPU's matmul peak and dtype, measured once and measured again when they cannot be
right; a rank without torchrun, and one whose peers never come."""

import json
import os
import subprocess
import sys
import time

import torch

from test_bad_input import ROOT, TINY, assert_one_line_error


def test_cpu_matmul_size_keeps_each_matmul_short(monkeypatch):
    """The full size where a dtype is fast; halved until one matmul takes max_s or less where it is slow (bf16
    without bf16 units: about 1 GFLOP/s), but never below the probe's size."""
    import hardware
    fake_matmul_rates(monkeypatch, {torch.bfloat16: 1e9, torch.float32: 1e11})
    assert hardware.cpu_matmul_size(torch.float32, 4096) == 4096               # 1.4 s a matmul
    assert hardware.cpu_matmul_size(torch.float32, 4096, max_s=1) == 2048
    assert hardware.cpu_matmul_size(torch.bfloat16, 4096) == 1024              # 2.1 s; 2048^3 would take 17 s
    assert hardware.cpu_matmul_size(torch.bfloat16, 4096, max_s=2) == 512
    assert hardware.cpu_matmul_size(torch.bfloat16, 4096, max_s=0.05) == 256   # the probe's size at least
    assert hardware.cpu_matmul_size(torch.bfloat16, 3000) == 750
    assert hardware.cpu_matmul_size(torch.bfloat16, 64) == 64


def test_auto_cpu_dtype_picks_the_faster_matmul(monkeypatch):
    import hardware
    for bf16, fp32, expected in [(8e11, 2e11, 'bfloat16'), (1.9e11, 3.6e11, 'float32'), (1e9, 1e11, 'float32')]:
        measured = []
        fake_matmul_rates(monkeypatch, {torch.bfloat16: bf16, torch.float32: fp32}, measured)
        assert hardware.auto_cpu_dtype() == (expected, bf16, fp32)
        size = 1024 if bf16 > 1e10 else 256                  # both dtypes timed at one size: the slower's
        assert measured == [(torch.bfloat16, size), (torch.float32, size)]
    monkeypatch.undo()
    name, bf16, fp32 = hardware.auto_cpu_dtype(n=256)   # measured here: a valid choice that matches its numbers
    assert bf16 > 0 and fp32 > 0 and name == ('bfloat16' if bf16 > fp32 else 'float32')


def test_cpu_peak_is_measured_once_per_machine_and_dtype(monkeypatch, tmp_path):
    """train.py's MFU peak: measured the first time, then read from the cache, so two runs' MFU use one peak;
    another dtype is another measurement, at a smaller size where it is slow; an unreadable cache entry or an
    unwritable cache is measured again, and the source says so."""
    import hardware
    measured = []
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    monkeypatch.setattr(hardware, 'load_per_core', lambda: 0.1)
    fake_matmul_rates(monkeypatch, {torch.float32: 1e11, torch.bfloat16: 1e9}, measured)
    first, second = hardware.cpu_peak_flops('float32'), hardware.cpu_peak_flops('float32')
    assert first[0] == second[0] == 1e11 and measured == [(torch.float32, 2048)]
    assert first[1].startswith('2048^3 float32') and 'measured now and cached' in first[1]
    assert second[1].startswith('2048^3 float32') and 'measured now' not in second[1]
    bf16 = hardware.cpu_peak_flops('bfloat16')
    assert bf16[0] == 1e9 and measured[-1] == (torch.bfloat16, 1024) and bf16[1].startswith('1024^3 bfloat16')
    assert hardware.cpu_peak_flops('bfloat16')[1].startswith('1024^3 bfloat16') and len(measured) == 2  # cached
    assert hardware.peak_flops('cpu', 'cpu', 'float32')[0] == 1e11 and len(measured) == 2
    (tmp_path / 'learned-transformer' / 'cpu_peak.json').write_text('not json')   # a broken cache: measured again
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 3
    key = next(iter(json.loads((tmp_path / 'learned-transformer' / 'cpu_peak.json').read_text())))
    (tmp_path / 'learned-transformer' / 'cpu_peak.json').write_text(json.dumps({key: 1e11}))   # an entry without n
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 4
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'file'))
    (tmp_path / 'file').write_text('')                                          # the cache's folder cannot exist
    flops, source = hardware.cpu_peak_flops('float32')
    assert flops == 1e11 and 'not cached' in source and len(measured) == 5


def test_a_cached_cpu_peak_that_cannot_be_the_peak_is_measured_again(monkeypatch, tmp_path):
    """A planted low peak is replaced once a step achieves more (train.py passes the achieved rate as floor), and
    so is one measured under load once the load is gone, or one measured long ago; each entry keeps its time and
    load, and a peak measured under load says so in its source."""
    import time as time_
    import hardware
    measured = []
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    monkeypatch.setattr(hardware, 'load_per_core', lambda: 0.1)
    fake_matmul_rates(monkeypatch, {torch.float32: 1e11}, measured)
    hardware.cpu_peak_flops('float32')
    path = tmp_path / 'learned-transformer' / 'cpu_peak.json'
    key, entry = next(iter(json.loads(path.read_text()).items()))
    assert entry['load'] == 0.1 and abs(entry['time'] - time_.time()) < 60
    plant = lambda **kw: path.write_text(json.dumps({key: dict(entry, **kw)}))
    plant(flops=2e10)                                               # a peak measured while the cores were busy
    assert hardware.cpu_peak_flops('float32')[0] == 2e10 and len(measured) == 1      # believed, until...
    assert hardware.cpu_peak_flops('float32', floor=3e10)[0] == 1e11 and len(measured) == 2   # a step beats it
    plant(flops=2e10, load=1.5)                                     # measured under load, and the load is gone
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 3
    plant(flops=2e10, time=time_.time() - 2 * hardware.PEAK_MAX_AGE_S)
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 4
    monkeypatch.setattr(hardware, 'load_per_core', lambda: 1.5)
    plant(flops=2e10, load=1.5)                                     # still loaded: measuring again would not help
    assert hardware.cpu_peak_flops('float32')[0] == 2e10 and len(measured) == 4
    plant(flops=2e10, time=0)
    flops, source = hardware.cpu_peak_flops('float32')
    assert flops == 1e11 and 'load 1.50 per core' in source and len(measured) == 5


def test_rank_without_torchrun_is_one_line(tmp_path):
    """RANK set by hand, without torchrun's other variables: one line naming the first missing, exit 2."""
    env = {k: v for k, v in os.environ.items() if k not in ('MASTER_ADDR', 'MASTER_PORT', 'LOCAL_RANK')}
    for extra, missing in (({}, 'LOCAL_RANK'), ({'LOCAL_RANK': '0', 'WORLD_SIZE': '1'}, 'MASTER_ADDR')):
        r = subprocess.run([sys.executable, 'train.py', *TINY, f'--out_dir={tmp_path / "o"}'], cwd=ROOT,
                           capture_output=True, text=True, env=dict(env, OMP_NUM_THREADS='1', RANK='0', **extra))
        assert_one_line_error((r.returncode, r.stdout, r.stderr), f'RANK is set but {missing} is not')


def test_a_rank_whose_peers_never_come_says_so_and_gives_up(tmp_path):
    """RANK 0 of 2 started alone: within seconds one line says what it waits for and for how long, and after
    --ddp_timeout one `error:` line, exit 2, not a silent wait."""
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    env = dict(os.environ, RANK='0', LOCAL_RANK='0', WORLD_SIZE='2', MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port),
               OMP_NUM_THREADS='1')
    t0 = time.time()
    r = subprocess.run([sys.executable, 'train.py', *TINY, '--max_iters=2', f'--out_dir={tmp_path}',
                        '--ddp_timeout=8'], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and 'Traceback' not in r.stderr and time.time() - t0 < 60, r.stderr[-2000:]
    assert lines[0].startswith(f'rank 0: waiting at 127.0.0.1:{port} for the other 1 process(es) of 2')
    assert lines[-1].startswith(f'error: rank 0: the process group at 127.0.0.1:{port} did not form within '
                                f'--ddp_timeout=8 s')


def fake_matmul_rates(monkeypatch, rates, measured=None):
    """Make hardware's CPU matmuls run at rates[dtype] FLOP/s at every size; measured collects (dtype, n) timed."""
    import hardware

    def flops(dtype, n, reps=5):
        if measured is not None and reps == 5:            # a timing, not cpu_matmul_size's probe
            measured.append((dtype, n))
        return rates[dtype]
    monkeypatch.setattr(hardware, 'cpu_matmul_flops', flops)


