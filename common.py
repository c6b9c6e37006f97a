"""
What the scripts (train.py, bench.py, sample.py) share: the task and model a config describes, the device
and dtype that 'auto' resolves to, and the CPU's matmul peak and allocator setting.
"""

import ctypes
import time
from dataclasses import fields

import torch

import tasks
from model import GPTConfig

# ----------------------------------------------------------------------------- config -> (task, model)


def make_task(config, n_test=None):
    """The task a train.py config names: config['task'] with its `<task>_*` keys, task_seed, fixed_train, and
    n_train / n_test when non-zero (n_test given here wins: bench.py needs only the task's shape). Raises
    ValueError (an unknown task or setting) or tasks.DataError (data not prepared)."""
    name = config['task']
    args = {k[len(name) + 1:]: v for k, v in config.items() if k.startswith(name + '_')}
    args.update(seed=config.get('task_seed', 0), fixed_train=config.get('fixed_train', False))
    args.update({k: config[k] for k in ('n_train', 'n_test') if config.get(k)})
    if n_test is not None:
        args['n_test'] = n_test
    return tasks.make_task(name, **args)


def model_args(config, vocab_size, seq_len):
    """GPTConfig keyword arguments from the keys of config that name its fields; the task fixes vocab_size,
    and block_size 0 means the task's sequence length seq_len. Raises ValueError when block_size < seq_len."""
    args = {f.name: config[f.name] for f in fields(GPTConfig) if f.name in config}
    args.update(vocab_size=vocab_size, block_size=config.get('block_size') or seq_len)
    if seq_len > args['block_size']:
        raise ValueError(f"the task's sequences have length {seq_len} > block_size={args['block_size']}")
    return args


# ----------------------------------------------------------------------------- device and dtype

DTYPES = ('bfloat16', 'float16', 'float32')


def resolve_device(device):
    """'auto' -> cuda, else mps, else cpu; returns (device, device_type). Raises ValueError for a name that is
    not cpu, cuda, cuda:N or mps, or a device that is not available."""
    if device == 'auto':
        device = 'cuda' if torch.cuda.is_available() else 'mps' if torch.backends.mps.is_available() else 'cpu'
    device_type = device.split(':')[0]
    if device_type not in ('cpu', 'cuda', 'mps') or (device_type != 'cuda' and ':' in device):
        raise ValueError(f"device must be auto, cpu, cuda, cuda:N or mps, got {device!r}")
    if device_type == 'cuda' and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} but CUDA is not available here")
    if device_type == 'mps' and not torch.backends.mps.is_available():
        raise ValueError("device='mps' but MPS is not available here")
    return device, device_type


def resolve_dtype(dtype, device_type):
    """'auto' -> bf16 on a GPU that has it (else fp16), fp32 on MPS, and on a CPU whichever of bf16 and fp32
    its matmuls run faster (auto_cpu_dtype). Returns (dtype name, note): the note gives the CPU measurement
    behind the choice ('' otherwise). Raises ValueError for another name."""
    note = ''
    if dtype == 'auto' and device_type == 'cpu':
        dtype, bf16, fp32 = auto_cpu_dtype()
        note = f" (auto: matmul bf16 {bf16 / 1e12:.2f} vs fp32 {fp32 / 1e12:.2f} TFLOP/s)"
    elif dtype == 'auto':
        dtype = 'float32' if device_type == 'mps' else 'bfloat16' if torch.cuda.is_bf16_supported() else 'float16'
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be auto, {', '.join(DTYPES)}, got {dtype!r}")
    return dtype, note


# ----------------------------------------------------------------------------- CPU


def cpu_matmul_flops(dtype, n=4096, reps=5):
    """FLOP/s of the fastest of reps (n, n) @ (n, n) matmuls in dtype (a torch.dtype) on the CPU, with torch's
    current number of threads, after one untimed matmul: bench.py's CPU peak for MFU (n = 4096: 0.1-0.7 s per
    matmul on 2 cores)."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    best = float('inf')
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best


def auto_cpu_dtype(n=1024):
    """'bfloat16' (autocast) when this CPU multiplies bf16 matrices faster than fp32 ones, else 'float32'.
    Returns (name, bf16 FLOP/s, fp32 FLOP/s) from cpu_matmul_flops at size n (about 0.1 s in all). Which wins
    depends on the chip: bf16 on CPUs with AMX or fast bf16 units (an AMD EPYC: 4x fp32), fp32 on an Intel Xeon
    with avx512_bf16 but no AMX (bf16 at half fp32's speed); docs/performance.md has both."""
    bf16, fp32 = cpu_matmul_flops(torch.bfloat16, n), cpu_matmul_flops(torch.float32, n)
    return ('bfloat16' if bf16 > fp32 else 'float32'), bf16, fp32


def keep_freed_memory():
    """Make glibc's malloc keep freed memory for reuse instead of returning it to the OS (CPU training).

    By default glibc serves every allocation above 32 MiB with a fresh mmap and unmaps it on free, so each
    training step page-faults its largest tensors (the logits and their gradient) in again.
    mallopt(M_MMAP_MAX, 0) serves large blocks from the heap and mallopt(M_TRIM_THRESHOLD, -1) never shrinks
    it, so every step reuses the same pages (like MALLOC_MMAP_MAX_=0 in the environment, plus no trimming).
    The cost: the process keeps its peak resident memory until it exits, and without mmap the heap can
    fragment -- compiled steps hold steady, eager fp32 steps at paper 1's LM shape grow until memory runs out
    (docs/performance.md). train.py and bench.py call it only with cpu_keep_memory=True. Returns True when
    applied, False without glibc (macOS, Windows, musl), where nothing changes."""
    try:
        libc = ctypes.CDLL('libc.so.6')
    except OSError:
        return False
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4          # <malloc.h>
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, -1))
