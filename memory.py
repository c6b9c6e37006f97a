"""
Memory: what the machine can still give a process (a GPU's free memory; on a CPU MemAvailable, the control group's
limit and the address-space limit), what a training step of a model will need (memory_estimate, checked before any
weight is allocated: check_memory), and glibc's allocator kept from returning freed memory between steps (CPU).
train.py, bench.py, sample.py and the paper scripts check their sizes here.
"""

import ctypes
import functools
import os
import threading

import torch

from head_loss import loss_chunk_rows
from model import GPT


def available_memory(device, device_type):
    """Bytes the device can still give: a GPU's free memory (torch.cuda.mem_get_info); on a CPU the least of
    MemAvailable (/proc/meminfo; else the free physical pages from os.sysconf), what the control group lets this
    process still use (cgroup_free: a container's or a batch job's limit) and what its address-space limit leaves
    (RLIMIT_AS, `ulimit -v`, less the address space already mapped). None when unknown (MPS)."""
    if device_type == 'cuda':
        return torch.cuda.mem_get_info(device)[0]
    if device_type != 'cpu':
        return None
    limits = [cgroup_free(), address_space_free()]
    try:
        with open('/proc/meminfo') as f:
            limits += [int(line.split()[1]) * 1024 for line in f if line.startswith('MemAvailable:')]
    except OSError:
        try:
            limits.append(os.sysconf('SC_AVPHYS_PAGES') * os.sysconf('SC_PAGE_SIZE'))
        except (ValueError, OSError, AttributeError):
            pass
    limits = [n for n in limits if n is not None]
    return max(min(limits), 0) if limits else None


def cgroup_free(root='/sys/fs/cgroup', own='/proc/self/cgroup'):
    """Bytes that this process's memory control group (mounted at root; own: /proc/self/cgroup) lets it still use:
    the limit (cgroup v2 memory.max, v1 memory.limit_in_bytes) less the usage (memory.current, memory.usage_in_bytes)
    plus the inactive page cache that the kernel reclaims first (memory.stat), the least over the group's folder and
    the mount's root (a container sees its own group there). None without a limit, or off Linux."""
    try:
        with open(own) as f:
            paths = {c.split(':', 2)[1]: c.split(':', 2)[2].strip() for c in f if c.count(':') >= 2}
    except OSError:
        return None
    found = []
    for version, sub, files in (('v2', '', ('memory.max', 'memory.current', 'inactive_file')),
                                ('v1', 'memory', ('memory.limit_in_bytes', 'memory.usage_in_bytes',
                                                  'total_inactive_file'))):
        group = paths.get('' if version == 'v2' else 'memory')
        if group is None:
            continue
        for folder in {os.path.join(root, sub, group.lstrip('/')), os.path.join(root, sub)}:
            try:
                with open(os.path.join(folder, files[0])) as f:
                    limit = f.read().strip()
                with open(os.path.join(folder, files[1])) as f:
                    usage = int(f.read())
            except (OSError, ValueError):
                continue
            if not limit.isdigit() or int(limit) >= 2 ** 60:              # 'max', or v1's "no limit"
                continue
            inactive = 0
            try:
                with open(os.path.join(folder, 'memory.stat')) as f:
                    inactive = sum(int(line.split()[1]) for line in f if line.split()[0] == files[2])
            except (OSError, ValueError, IndexError):
                pass
            found.append(int(limit) - usage + inactive)
    return min(found) if found else None


def address_space_free():
    """Bytes of address space that RLIMIT_AS (`ulimit -v`) still leaves this process (its soft limit less the
    VmSize mapped now), None without a limit."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        with open('/proc/self/status') as f:
            mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith('VmSize:'))
        return soft - mapped
    except (ImportError, OSError, ValueError, StopIteration):
        return None


def memory_shortfall(need, device='cpu', device_type='cpu'):
    """'about X GiB is needed but Y GiB is available on device' when need (bytes) exceeds available_memory, else
    None: the one-line reason for the scripts' memory pre-checks."""
    have = available_memory(device, device_type)
    if have is None or need <= have:
        return None
    gib = lambda n: f"{n / 2 ** 30:,.1f}" if n < 2 ** 50 else f"{n / 2 ** 30:.2e}"
    return f"about {gib(need)} GiB is needed but {gib(have)} GiB is available on {device}"


@functools.cache
def glibc():
    """glibc's C library (ctypes), or None where the C library is another (macOS, Windows, musl)."""
    try:
        libc = ctypes.CDLL('libc.so.6')
    except OSError:
        return None
    return libc if hasattr(libc, 'mallopt') and hasattr(libc, 'malloc_trim') else None


def keep_freed_memory():
    """Make glibc's malloc keep freed memory for reuse instead of returning it to the OS (CPU training).

    By default glibc serves every allocation above 32 MiB with a fresh mmap and unmaps it on free, so each
    training step page-faults its largest tensors in again. mallopt(M_MMAP_MAX, 0) serves large blocks from
    the heap and mallopt(M_TRIM_THRESHOLD, -1) never shrinks it, so every step reuses the same pages (like
    MALLOC_MMAP_MAX_=0 in the environment, plus no trimming). The cost: the process keeps its peak resident
    memory until it exits (release_free_memory gives it back), and without mmap the heap can fragment: one
    model at paper 1's LM shape holds steady, but this model and Hugging Face's Llama in one eager process
    grew to 23.3 GiB (killed) where the default allocator peaks at 12.8 (results/performance/README.md#kept-memory).
    train.py and bench.py call it only with cpu_keep_memory=True. Returns True when applied, False without
    glibc (macOS, Windows, musl), where nothing changes."""
    libc = glibc()
    if libc is None:
        return False
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4          # <malloc.h>
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, -1))


def resident_bytes():
    """Bytes of this process resident in RAM now (/proc/self/statm), or None where /proc is absent."""
    try:
        with open('/proc/self/statm') as f:
            return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')
    except (OSError, ValueError, IndexError):
        return None


class ResidentPeak:
    """Context manager: the largest resident set (bytes) of this process while its block runs, sampled from
    /proc/self/statm every `interval` seconds by a thread (the heavy kernels release the GIL). `start` is the
    resident set on entry and `peak` the largest sample, so a peak shorter than the interval can be missed.
    Linux only: needs resident_bytes() to be a number."""

    def __init__(self, interval=0.002):
        self.interval = interval

    def __enter__(self):
        self.start = self.peak = resident_bytes()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._done.wait(self.interval):
            self.peak = max(self.peak, resident_bytes())

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, resident_bytes())


def release_free_memory():
    """CPU with glibc: give the heap's free pages back to the OS (malloc_trim), so that the resident set is what
    is live -- after keep_freed_memory too, which only stops malloc from doing so by itself. A no-op elsewhere."""
    libc = glibc()
    if libc is not None:
        libc.malloc_trim(0)


# ----------------------------------------------------------------------------- a training step

MAX_PARAMS = 1e13          # parameters: beyond any machine's memory (40 TB in fp32)


def activation_bytes(dtype):
    """Bytes of one activation value: 2 under bf16 / fp16 autocast, else the dtype's own (4, or 8 for float64)."""
    return {'float32': 4, 'float64': 8}.get(dtype, 2)


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
    act = activation_bytes(dtype)
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
    they share its RAM) needs more than the device has free (available_memory), or an evaluation batch
    of eval_batch_size x T tokens does: its int64 inputs and targets, the weights and, without gradients, one
    layer's activations (8 n_embd + n_head T values per token) and the head's chunk."""
    need, parts = memory_estimate(config, micro_batch_size, T, dtype, device_type)
    tokens = eval_batch_size * T
    act = activation_bytes(dtype)
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
