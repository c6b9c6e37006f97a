"""
What keeps a run safe from the outside: one run per out_dir (a lock), a stop asked by a signal saving the run
after its step, a process of the run that stopped or ended reported rather than waited for, and a fault met while
running ended with one line (exit status FAULT). What fits in memory is memory.py's.
"""

import math
import os
import signal
import sys
import time
import traceback
from contextlib import contextmanager

import torch

from checkpoint import last_checkpoint
from configurator import FAULT, fail
from files import lock_folder

def lock_dir(path):
    """One run per out_dir: files.lock_folder(path), held until the process ends; the lock file holds the PID.
    Raises ValueError naming the holder's PID, or the folder and the cause when it cannot be made or written."""
    lock_folder(path, holder='another run', owner="the run's")


# The catchable signals by which a scheduler, the kernel or a user ends a job or warns that its end is near
# (docs/runs.md#faults-what-each-does-to-a-run): each asks the run to stop after its step with ckpt.pt saved,
# exit 128 + N.
#   INT (Ctrl-C), TERM (preemption, kill), HUP (a closed terminal; left ignored under nohup), QUIT (Ctrl-\),
#   USR1 / USR2 (SLURM's --signal and other schedulers' warnings), XCPU (a CPU-time limit: the kernel),
#   PWR (a power failure, on Linux), ALRM (a wall-clock alarm set for the job).
# SIGXFSZ (a file-size limit) is ignored instead: the write that passes the limit then fails with EFBIG, and the
# error names the file and the cause rather than the process dying unsaved.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1',
                                                         'SIGUSR2', 'SIGXCPU', 'SIGPWR', 'SIGALRM')
                     if hasattr(signal, name))


class StopSignals:
    """Context manager: while it is open, each of STOP_SIGNALS asks the run to stop after the step under way:
    `signum` is the first such signal (0 while none has come), and a second, REPEAT_S seconds or more after the
    first, exits at once with 128 + signum. One sooner is the same request delivered twice: coreutils `timeout`
    signals its child and then the child's process group, a terminal's Ctrl-C reaches torchrun and its workers,
    which torchrun signals again. A signal other than SIGINT and SIGTERM that was ignored when the run started
    (SIGHUP under nohup) stays ignored; SIGXFSZ is ignored (a write past the file-size limit fails with EFBIG
    instead). The handlers that were there before are put back on exit, unless a stop was asked: the process is
    then on its way out, and the stop signals are ignored, so that a repeat does not end it by the default action
    (a signal number for its exit status, 143 lost) while the interpreter shuts down."""

    SIGNALS = STOP_SIGNALS
    REPEAT_S = 1.0

    def __enter__(self):
        self.signum, self.first_at = 0, None
        self.before = {sig: signal.getsignal(sig) for sig in self.SIGNALS}
        for sig, handler in self.before.items():
            if handler is not signal.SIG_IGN or sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, self.request)
        if hasattr(signal, 'SIGXFSZ'):
            self.before[signal.SIGXFSZ] = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        return self

    def request(self, signum, frame):
        if self.signum:
            if time.monotonic() - self.first_at >= self.REPEAT_S:
                os._exit(128 + signum)
            return
        self.signum, self.first_at = signum, time.monotonic()
        try:
            print(f"{signal.Signals(signum).name}: stopping after this step, with ckpt.pt saved (again: exit at "
                  f"once)", file=sys.stderr, flush=True)
        except (OSError, ValueError):          # a closed or full stderr: the stop goes on without its line
            pass

    def __exit__(self, *exc):
        for sig, handler in self.before.items():
            signal.signal(sig, signal.SIG_IGN if self.signum and sig in self.SIGNALS else handler)


def fault(message):
    """End the run on a fault met while it ran (bad input is configurator.fail's, status 2): one line
    `error: message` on stderr, exit status 3."""
    fail(message, status=FAULT)


def check_finite(value, what, iter_num, ckpt_path, tolerated=False):
    """End the run (fault, exit 3) when value, the training loss of the last log interval or an evaluation's
    val_loss (what names it), is nan or inf: the run diverged, and going on would only write nan weights (ckpt.pt
    is never written with them: checkpoint.save). tolerated: a float16 run, whose GradScaler skips the steps with
    non-finite gradients and goes on (its evaluations are still checked)."""
    if not math.isfinite(value) and not tolerated:
        fault(f"the {what} is {value} at iteration {iter_num}: the run diverged (lower --learning_rate=<lr>, or "
              f"set --grad_clip=1.0); {last_checkpoint(ckpt_path)}")


def failed_collective(e):
    """(name, how) of the collective of torch.distributed that raised e (gloo's RuntimeError): how is True when it
    timed out (a process stopped or stuck), else the words of a lost connection (a process ended); None for any
    other exception."""
    text = str(e).lower()
    timed_out = 'timed out' in text or 'timeout' in text
    lost = [s for s in LOST if s in text]
    if not (isinstance(e, RuntimeError) and (timed_out or lost) and torch.distributed.is_initialized()):
        return None
    frames = traceback.extract_tb(e.__traceback__)
    names = [f.name for f in frames if f.filename.endswith('distributed_c10d.py')]
    name = names[-1] if names else "DDP's gradient all-reduce" if any(f.name == 'backward' for f in frames) else \
        'a collective'
    return name, timed_out or lost[0]


LOST = ('connection closed by peer', 'connection reset by peer', 'broken pipe', 'connection refused')   # gloo's words


@contextmanager
def collective_faults(ckpt_path, timeout):
    """Under torchrun, a collective that fails while this is open ends the process with one line (fault, exit 3)
    naming it, why (it waited timeout seconds: a process of the run stopped or stuck; or another process ended) and
    the iteration of the last complete ckpt.pt (rank 0 writes it between steps, never half a step), rather than
    a traceback, or, without a timeout, waiting for ever."""
    try:
        yield
    except RuntimeError as e:
        found = failed_collective(e)
        if found is None:
            raise
        (name, how), rank = found, torch.distributed.get_rank()
        why = (f"timed out after {timeout:g} s (a rank stopped or stuck?)" if how is True else
               f"failed: another process of the run ended ({how})")
        fault(f"rank {rank}: {name} {why}; {last_checkpoint(ckpt_path)}")
