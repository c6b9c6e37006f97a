"""
What keeps a run safe from the outside: one run per out_dir (a lock), a stop asked by a signal saving the run
after its step, a process of the run that stopped or ended reported rather than waited for, and a model that would
not fit refused before it is built.
"""

import math
import os
import signal
import sys
import time
import traceback
from contextlib import contextmanager

import torch

from checkpoint import FAULT, last_checkpoint
from configurator import fail
from files import lock_folder
from hardware import available_memory
from head_loss import loss_chunk_rows
from model import GPT

def lock_dir(path):
    """One run per out_dir: files.lock_folder(path), held until the process ends; the lock file holds the PID.
    Raises ValueError naming the holder's PID, or the folder and the cause when it cannot be made or written."""
    lock_folder(path, holder='another run', owner="the run's")


# The catchable signals by which a scheduler, the kernel or a user ends a job or warns that its end is near
# (docs/runs.md#faults-what-each-does-to-a-run): each asks the run to stop after its step with ckpt.pt saved, exit 128 + N.
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


MAX_PARAMS = 1e13          # parameters: beyond any machine's memory (40 TB in fp32)


def memory_estimate(config, micro_batch_size, T, dtype, device_type):
    """Rough bytes a training step of the model of GPTConfig config holds at its peak, as (total, {part: bytes}):
    fp32 weights and buffers; per trainable parameter a gradient and AdamW's two moments (12 bytes), plus a
    16-bit copy of the weights under autocast (dtype bfloat16 / float16); activations kept for the backward of
    one micro-batch of micro_batch_size * T tokens, (34 n_embd + n_head T) values per token and layer
    (Korthikanti et al. 2022, with attention scores) at 2 bytes for bf16/fp16 and 4 for fp32 (8 for float64,
    whose weights are 8 bytes too); and the output layer's (head_loss.ChunkedHeadLoss): one chunk's logits and their
    fp32 log-softmax, and under autocast W's 16-bit copy and a chunk's W gradient in 16 and 32 bits. An upper
    estimate (bench.py's step_memory measures it). Raises ValueError for an impossible shape, or one whose rough
    parameter count (n_layer blocks of 12 n_embd², the embedding and the head) passes MAX_PARAMS: checked on the
    numbers before any module is made, so that an absurd size is refused at once."""
    rough = config.n_layer * 12 * config.n_embd ** 2 + 2 * config.vocab_size * config.n_embd
    if rough > MAX_PARAMS:
        raise ValueError(f"--n_layer={config.n_layer} --n_embd={config.n_embd}: about {rough:.2e} parameters, over "
                         f"{MAX_PARAMS:.0e}: no machine holds this model")
    with torch.device('meta'):                   # shapes only: nothing allocated
        model = GPT(config)
    trainable, total = model.num_params()
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    act = {'float32': 4, 'float64': 8}.get(dtype, 2)
    word = 8 if dtype == 'float64' else 4
    tokens, vocab = micro_batch_size * T, model.lm_head.out_features
    rows = min(tokens, loss_chunk_rows(vocab, device_type))
    parts = dict(weights=word * total + buffers + (2 * total if act == 2 else 0), optimizer=3 * word * trainable,
                 activations=tokens * config.n_layer * (34 * config.n_embd + config.n_head * T) * act,
                 head=rows * vocab * (act + word) + (vocab * config.n_embd * 6 if act == 2 else 0))
    return sum(parts.values()), parts


def check_memory(config, micro_batch_size, T, dtype, device, device_type, batch_size, eval_batch_size=0):
    """Raise ValueError, one line with both numbers and what to lower, when a training step of the GPTConfig
    config at micro_batch_size x T tokens (memory_estimate; times the processes on this host on a CPU, where
    they share its RAM) needs more than the device has free (hardware.available_memory), or an evaluation batch
    of eval_batch_size x T tokens does: its int64 inputs and targets, the weights and, without gradients, one
    layer's activations (8 n_embd + n_head T values per token) and the head's chunk."""
    need, parts = memory_estimate(config, micro_batch_size, T, dtype, device_type)
    tokens = eval_batch_size * T
    act = {'float32': 4, 'float64': 8}.get(dtype, 2)
    evaluation = parts['weights'] + parts['head'] + tokens * (16 + (8 * config.n_embd + config.n_head * T) * act)
    if evaluation > need:
        raise_if_short('evaluation batch', evaluation, dict(evaluation=evaluation), device, device_type,
                       f"lower --eval_batch_size=<n> (now {eval_batch_size})")
    raise_if_short('micro-batch', need, parts, device, device_type,
                   f"lower --micro_batch_size=<n> (now {micro_batch_size}; the global batch stays {batch_size}), or "
                   f"the model")


def raise_if_short(batch, need, parts, device, device_type, lower):
    """check_memory's refusal: ValueError naming the batch, when need bytes (the sum of parts, per process) times
    the processes on this host on a CPU (where they share its RAM) exceed what the device has free."""
    need *= int(os.environ.get('LOCAL_WORLD_SIZE', 1)) if device_type == 'cpu' else 1
    have = available_memory(device, device_type)
    if have is not None and need > have:
        raise ValueError(f"this model and {batch} need about {need / 2**30:.1f} GiB ("
                         f"{', '.join(f'{k} {v / 2**30:.1f}' for k, v in parts.items())} GiB per process) but "
                         f"{have / 2**30:.1f} GiB is available on {device}: {lower} (--memory_check=False tries "
                         f"anyway)")
