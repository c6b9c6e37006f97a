"""Tests for run_guard.py: one run per out_dir, the stop signals (save after the step, a stop record, exit
128 + N; one request however often it is delivered), and a rank that stops or is lost."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from test_bad_input import ROOT, TINY, assert_one_line_error, records, run_script, subprocess_run
from test_faults import train


def start_run(out_dir, *flags, launcher=(sys.executable,), session=False):
    """A long tiny run in the background (stdout, stderr to files beside out_dir), once it has logged 3 steps;
    with session=True in a process group of its own, as a scheduler or a terminal starts one."""
    log = open(f'{out_dir}.out', 'w'), open(f'{out_dir}.err', 'w')
    p = subprocess.Popen([*launcher, 'train.py', *TINY, '--max_iters=100000', '--lr_decay_iters=100000',
                          f'--out_dir={out_dir}', *flags], cwd=ROOT, stdout=log[0], stderr=log[1],
                         env=dict(os.environ, OMP_NUM_THREADS='1'), start_new_session=session)
    deadline = time.time() + 180
    path = os.path.join(out_dir, 'train_log.jsonl')
    while not (os.path.isfile(path) and len(open(path).readlines()) >= 3):
        assert p.poll() is None and time.time() < deadline, open(f'{out_dir}.err').read()[-2000:]
        time.sleep(0.05)
    return p


def test_one_run_per_out_dir(tmp_path, monkeypatch, capsys):
    """While a run holds out_dir, a second run into it (from scratch, or resuming) exits 2 naming its PID."""
    held = str(tmp_path / 'held')
    p = start_run(held)
    try:
        for flags in (['--overwrite=True'], ['--init_from=resume']):
            assert_one_line_error(subprocess_run('train.py', TINY + [f'--out_dir={held}', *flags]),
                                  f'--out_dir={held} is in use by another run (PID {p.pid})')
    finally:
        p.kill()
        p.wait()
    inside_a_file = tmp_path / 'held' / 'ckpt.pt' / 'a'
    assert_one_line_error(run_script('train.py', TINY + [f'--out_dir={inside_a_file}'], monkeypatch, capsys),
                          'cannot write in --out_dir=')
    assert run_script('train.py', TINY + ['--max_iters=2', f'--out_dir={held}', '--overwrite=True'], monkeypatch,
                      capsys)[0] == 0                                             # the OS let go of the lock


def processes_running(text):
    """The PIDs of the processes whose command line holds text (Linux's /proc; [] elsewhere)."""
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc') if os.path.isdir('/proc') else []):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                found += [int(pid)] if text.encode() in f.read() else []
        except OSError:
            pass
    return found


@pytest.mark.parametrize('sig, prefetch', [(signal.SIGTERM, 0), (signal.SIGINT, 0), (signal.SIGHUP, 0),
                                         (signal.SIGTERM, 2)])
def test_a_signal_saves_and_resume_continues_exactly(sig, prefetch, tmp_path, monkeypatch, capsys):
    """SIGTERM (a scheduler's preemption), SIGINT (Ctrl-C) or SIGHUP (a closed terminal): the run saves ckpt.pt
    after its step, says where it stopped, exits 128 + signal without a traceback, and --init_from=resume gives the
    uninterrupted run's losses.
    With a prefetching worker the signal goes to the whole process group, as `timeout` and a terminal send it:
    the checkpoint holds the data stream's state after the last batch trained on (not the worker's, ahead),
    and the worker ends with the run."""
    stopped, whole = str(tmp_path / 'stopped'), str(tmp_path / 'whole')
    p = start_run(stopped, f'--prefetch={prefetch}', session=True)
    try:
        if os.path.isdir('/proc'):                                # the run, and its worker if it prefetches
            assert len(processes_running(f'--out_dir={stopped}')) == 1 + (prefetch > 0)
    finally:
        os.killpg(p.pid, sig)
    assert p.wait(timeout=120) == 128 + sig
    assert processes_running(f'--out_dir={stopped}') == []
    err = open(f'{stopped}.err').read()
    at = torch.load(os.path.join(stopped, 'ckpt.pt'), weights_only=True)['iter_num']
    assert 'Traceback' not in err and f'stopped by {signal.Signals(sig).name} at iteration {at}' in err, err
    assert records(stopped, 'train_log.jsonl')[-1].items() >= dict(iter=at, stopped=signal.Signals(sig).name).items()
    flags = TINY + [f'--max_iters={at + 3}', '--lr_decay_iters=100000']
    assert run_script('train.py', flags + [f'--out_dir={stopped}', '--init_from=resume'], monkeypatch, capsys)[0] == 0
    assert run_script('train.py', flags + [f'--out_dir={whole}'], monkeypatch, capsys)[0] == 0
    a, b = records(whole, 'train_log.jsonl'), records(stopped, 'train_log.jsonl')
    assert [r['iter'] for r in b] == [r['iter'] for r in a] == list(range(1, at + 4))    # the stop is not kept
    assert [r['loss'] for r in b] == pytest.approx([r['loss'] for r in a], rel=1e-6)


def test_a_signal_delivered_twice_is_one_request(tmp_path):
    """coreutils `timeout` sends SIGTERM to its child and then to the child's process group, so the run gets it
    twice within microseconds (here 50 ms apart, after the first was handled): still one stop, saved and recorded."""
    out = str(tmp_path / 'run')
    p = start_run(out, session=True)
    os.kill(p.pid, signal.SIGTERM)
    time.sleep(0.05)
    os.killpg(p.pid, signal.SIGTERM)
    assert p.wait(timeout=120) == 128 + signal.SIGTERM, open(f'{out}.err').read()[-2000:]
    at = torch.load(os.path.join(out, 'ckpt.pt'), weights_only=True)['iter_num']
    assert records(out, 'train_log.jsonl')[-1].items() >= dict(iter=at, stopped='SIGTERM').items()


def test_a_second_signal_later_exits_at_once(monkeypatch):
    """A signal REPEAT_S seconds or more after the first exits at once with 128 + N; one sooner is ignored. Once a
    stop was asked, leaving the context ignores the stop signals (the process is on its way out)."""
    import run_guard
    clock, exits = [100.0], []
    monkeypatch.setattr(run_guard.time, 'monotonic', lambda: clock[0])
    monkeypatch.setattr(run_guard.os, '_exit', exits.append)
    before = {sig: signal.getsignal(sig) for sig in run_guard.STOP_SIGNALS}
    try:
        with run_guard.StopSignals() as signals:
            signals.request(signal.SIGTERM, None)
            clock[0] += signals.REPEAT_S / 2
            signals.request(signal.SIGTERM, None)
            assert (signals.signum, exits) == (signal.SIGTERM, [])
            clock[0] += signals.REPEAT_S
            signals.request(signal.SIGINT, None)
            assert exits == [128 + signal.SIGINT]
        assert {signal.getsignal(sig) for sig in run_guard.STOP_SIGNALS} == {signal.SIG_IGN}
    finally:
        for sig, handler in before.items():           # this process's later children inherit what it ignores
            signal.signal(sig, handler)


@pytest.mark.parametrize('name', [s.name for s in __import__('run_guard').STOP_SIGNALS
                                  if s.name not in ('SIGINT', 'SIGTERM', 'SIGHUP')])
def test_every_end_of_job_signal_saves_like_sigterm(name, tmp_path):
    """The other signals by which a scheduler or the kernel ends a job or warns of its end (SIGUSR1 / SIGUSR2:
    SLURM's --signal; SIGXCPU: a CPU-time limit; SIGQUIT, SIGPWR, SIGALRM): the step finishes, ckpt.pt is
    saved, the stop is recorded, exit 128 + N."""
    sig = getattr(signal, name)
    out = str(tmp_path / 'run')
    p = start_run(out, session=True)
    os.kill(p.pid, sig)
    assert p.wait(timeout=120) == 128 + sig, open(f'{out}.err').read()[-2000:]
    at = torch.load(os.path.join(out, 'ckpt.pt'), weights_only=True)['iter_num']
    assert records(out, 'train_log.jsonl')[-1].items() >= dict(iter=at, stopped=name).items()
    assert f'stopped by {name} at iteration {at}' in open(f'{out}.err').read()


def test_a_signal_to_one_of_two_processes_stops_both_after_the_same_step(tmp_path):
    """Under torchrun (gloo), SIGTERM to rank 1 alone: both ranks stop after the same step, rank 0 saves."""
    out = str(tmp_path / 'two')
    p = start_run(out, launcher=(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=2'))
    try:
        workers = subprocess.run(['pgrep', '-P', str(p.pid)], capture_output=True, text=True).stdout.split()
        rank = {int(open(f'/proc/{w}/environ').read().split('RANK=')[1].split('\0')[0]): int(w) for w in workers
                if 'LOCAL_RANK=' in open(f'/proc/{w}/environ').read()}
        os.kill(rank[1], signal.SIGTERM)
        p.wait(timeout=120)
    finally:
        p.kill()
    at = torch.load(os.path.join(out, 'ckpt.pt'), weights_only=True)['iter_num']
    assert records(out, 'train_log.jsonl')[-1].items() >= dict(iter=at, stopped='SIGTERM').items()
    assert 'Traceback' not in open(f'{out}.err').read().split('stopped by')[0]


@pytest.mark.skipif(not os.path.isdir('/proc'), reason='finds the ranks in /proc')
@pytest.mark.parametrize('sig, message', [(signal.SIGSTOP, 'timed out after 8 s (a rank stopped or stuck?)'),
                                          (signal.SIGKILL, 'failed: another process of the run ended')])
def test_a_stopped_rank_ends_the_other_with_one_line(sig, message, tmp_path):
    """Two gloo processes, rank 1 stopped (SIGSTOP, as a debugger or a frozen node) or killed (SIGKILL, out of
    memory): rank 0 does not wait for ever in its collective; after --ddp_timeout seconds (stopped) or at once
    (killed) it says which collective failed and the iteration ckpt.pt is from, and exits 3."""
    out, timeout = str(tmp_path / 'two'), 8
    p = start_run(out, f'--ddp_timeout={timeout}', '--checkpoint_interval=2',
                  launcher=(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=2'))
    stopped = None
    try:
        rank = ranks(p)
        stopped = rank[1]
        os.kill(stopped, sig)
        t0, err = time.time(), ''
        while 'error: rank 0' not in err and time.time() < t0 + timeout + 60:
            time.sleep(0.2)
            err = open(f'{out}.err').read()
        elapsed = time.time() - t0
        while running(rank[0]) and time.time() < t0 + timeout + 90:
            time.sleep(0.1)
    finally:
        for s in (signal.SIGKILL, signal.SIGCONT) if stopped else ():
            try:
                os.kill(stopped, s)
            except ProcessLookupError:
                pass
        p.wait(timeout=120)
    lines = [line for line in err.splitlines() if line.startswith('error: ')]
    at = torch.load(os.path.join(out, 'ckpt.pt'), weights_only=True)['iter_num']
    assert len(lines) == 1 and lines[0].startswith('error: rank 0: ') and message in lines[0] \
        and f'ckpt.pt is from iteration {at}: continue with --init_from=resume' in lines[0], err[-3000:]
    assert elapsed < timeout + 30 and 'Traceback' not in err.split('error: rank 0')[0], (elapsed, err[-3000:])
    if sig == signal.SIGSTOP:                  # (killed, rank 1 may be all that torchrun's report names)
        assert 'exitcode:3(pid' in open(f'{out}.err').read().replace(' ', '')     # torchrun's report of rank 0


def test_a_full_disk_or_a_folder_at_the_lock_is_one_line(tmp_path, monkeypatch, capsys):
    """The lock file's PID cannot be written (a full disk), or .lock is a folder: one line naming the file,
    exit 2."""
    import errno
    import files

    class Full:
        def __init__(self, f):
            self.f = f

        def __getattr__(self, name):
            return getattr(self.f, name)

        def write(self, text):
            raise OSError(errno.ENOSPC, 'No space left on device')
    monkeypatch.setattr(files, 'open', lambda path, mode: Full(open(path, mode)), raising=False)
    run = tmp_path / 'run'
    assert_one_line_error(train(run, '--max_iters=1', monkeypatch=monkeypatch, capsys=capsys),
                          f"cannot write {run / '.lock'}: ENOSPC (No space left on device)")
    monkeypatch.undo()
    os.makedirs(tmp_path / 'dir' / '.lock')
    assert_one_line_error(train(tmp_path / 'dir', '--max_iters=1', monkeypatch=monkeypatch, capsys=capsys),
                          f"{tmp_path / 'dir' / '.lock'} is a folder, where the run's lock file belongs")


def ranks(launcher):
    """{rank: PID} of the worker processes of a torchrun launcher (their RANK in /proc/<pid>/environ)."""
    found = {}
    for w in subprocess.run(['pgrep', '-P', str(launcher.pid)], capture_output=True, text=True).stdout.split():
        env = open(f'/proc/{w}/environ').read()
        if 'LOCAL_RANK=' in env:
            found[int(env.split('\0RANK=')[1].split('\0')[0])] = int(w)
    return found


def running(pid):
    """Whether process pid runs (not ended, nor a zombie that its parent has yet to reap)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False
