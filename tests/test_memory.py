"""Tests for memory.py: the memory a process may use (a cgroup's limit, the address-space limit), the estimate of a
training step checked before any weight is allocated, and malloc's kept memory (glibc)."""

import os
import platform
import subprocess
import sys
import time

import pytest
import torch

from test_bad_input import ROOT, TINY, assert_one_line_error


@pytest.mark.skipif(platform.libc_ver()[0] != 'glibc', reason='mallopt is glibc-only')
def test_keep_freed_memory_reuses_pages():
    """glibc's default maps a fresh 64 MiB block every time (16,384 page faults of 4 KiB); kept memory is reused
    after a few cycles (no faults)."""
    def run(mode):
        r = subprocess.run([sys.executable, '-c', FAULTS, mode], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        applied, faults = r.stdout.split()
        return applied == 'True', int(faults)
    (applied_default, default), (applied_keep, kept) = run('default'), run('keep')
    assert not applied_default and applied_keep
    assert default > 10_000 and kept < 1_000, (default, kept)


@pytest.mark.skipif(not os.path.exists('/proc/self/statm'), reason='needs /proc')
def test_resident_peak_sees_a_freed_block():
    """A 256 MiB tensor written and freed inside the block: its pages are in the sampled peak, not in the resident
    set after it (glibc maps a block this large afresh and unmaps it on free)."""
    from memory import ResidentPeak, release_free_memory, resident_bytes
    release_free_memory()
    with ResidentPeak(interval=0.001) as rss:
        block = torch.ones(256, 2**20, dtype=torch.uint8)
        time.sleep(0.05)                                # several samples while it lives
        del block
    assert rss.peak - rss.start >= 250 * 2**20
    assert resident_bytes() - rss.start < 100 * 2**20


@pytest.mark.skipif(platform.libc_ver()[0] != 'glibc', reason='mallopt is glibc-only')
def test_release_free_memory_after_keep_freed_memory():
    """Kept memory stays resident after a free; release_free_memory hands it back (bench.step_memory relies on
    this to measure a step under kept memory)."""
    r = subprocess.run([sys.executable, '-c', KEPT], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout) >= 200 * 2**20


def test_available_memory_respects_a_cgroup_limit(tmp_path):
    """memory.cgroup_free: a container's memory.max (v2) or memory.limit_in_bytes (v1) less its usage, plus the
    inactive page cache; None without a limit."""
    import memory
    (tmp_path / 'v2' / 'job').mkdir(parents=True)
    for name, text in (('memory.max', '1000000\n'), ('memory.current', '600000\n'),
                       ('memory.stat', 'anon 500000\ninactive_file 50000\n')):
        (tmp_path / 'v2' / 'job' / name).write_text(text)
    (tmp_path / 'v2.cgroup').write_text('0::/job\n')
    assert memory.cgroup_free(str(tmp_path / 'v2'), str(tmp_path / 'v2.cgroup')) == 1000000 - 600000 + 50000
    (tmp_path / 'v1' / 'memory').mkdir(parents=True)
    for name, text in (('memory.limit_in_bytes', '2000000\n'), ('memory.usage_in_bytes', '1500000\n'),
                       ('memory.stat', 'total_inactive_file 100000\n')):
        (tmp_path / 'v1' / 'memory' / name).write_text(text)
    (tmp_path / 'v1.cgroup').write_text('4:memory:/outside/the/container\n0::/\n')
    assert memory.cgroup_free(str(tmp_path / 'v1'), str(tmp_path / 'v1.cgroup')) == 2000000 - 1500000 + 100000
    (tmp_path / 'v2' / 'job' / 'memory.max').write_text('max\n')
    assert memory.cgroup_free(str(tmp_path / 'v2'), str(tmp_path / 'v2.cgroup')) is None


@pytest.mark.skipif(not os.path.isfile('/proc/self/status'), reason='reads VmSize from /proc')
def test_an_address_space_limit_refuses_a_model_that_cannot_fit(tmp_path):
    """Under `ulimit -v` (RLIMIT_AS) of 6 GiB, a 400M-parameter model (about 7 GiB to train) is one line naming
    what is available under the limit, before any weight is allocated; not an allocation failure."""
    import resource
    limit = 6 * 2 ** 30
    r = subprocess.run([sys.executable, 'train.py', *TINY, '--n_layer=8', '--n_embd=2048', '--n_head=16',
                        f'--out_dir={tmp_path / "o"}'], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS='1'),
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert_one_line_error((r.returncode, r.stdout, r.stderr), 'GiB is available on cpu')
    assert float(r.stderr.split(' GiB is available')[0].split()[-1]) < 6


FAULTS = """
import resource, sys, torch
from memory import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == 'keep' else False
faults = []
for _ in range(8):                                  # a 64 MiB block allocated and freed, as a training step does
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.ones(64, 2**20, dtype=torch.uint8)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(applied, min(faults[1:]))                     # the fewest page faults of a reallocation
"""


KEPT = """
import torch
from memory import keep_freed_memory, release_free_memory, resident_bytes
assert keep_freed_memory()
torch.ones(256, 2**20, dtype=torch.uint8)            # 256 MiB written and freed: kept in the heap
kept = resident_bytes()
release_free_memory()
print(kept - resident_bytes())
"""
