"""
What the scripts (train.py, bench.py, sample.py) share: the task and model a config describes, reading a
checkpoint, one run per out_dir (lock_dir), the device and dtype that 'auto' resolves to, the CPU's matmul peak
and allocator setting, and the process's resident memory.
"""

import ctypes
import functools
import hashlib
import os
import threading
import time
from dataclasses import fields

import torch

import tasks
import universal
from model import GPT, GPTConfig, loss_chunk_rows

# ----------------------------------------------------------------------------- config -> (task, model)


def make_task(config, n_test=None):
    """The task a train.py config names: config['task'] with its `<task>_*` keys, task_seed, fixed_train,
    train_on_test, and n_train / n_test when non-zero (n_test given here wins: bench.py needs only the task's
    shape). Raises ValueError (an unknown task or setting) or tasks.DataError (data not prepared)."""
    name = config['task']
    args = {k[len(name) + 1:]: v for k, v in config.items() if k.startswith(name + '_')}
    args.update(seed=config.get('task_seed', 0), fixed_train=config.get('fixed_train', False))
    args.update({k: config[k] for k in ('n_train', 'n_test') if config.get(k)})
    if n_test is not None:
        args['n_test'] = n_test
    task = tasks.make_task(name, **args)
    task.train_on_test = task.train_on_test or bool(config.get('train_on_test', False))
    return task


def check_shape(config):
    """Raise ValueError naming the first of config's model-size keys (n_layer, n_head, n_embd >= 1; head_dim,
    block_size >= 0; vocab_size >= 1) that is out of range."""
    for key, low in (('n_layer', 1), ('n_head', 1), ('n_embd', 1), ('head_dim', 0), ('block_size', 0),
                     ('vocab_size', 1)):
        if key in config and config[key] < low:
            raise ValueError(f"--{key} must be >= {low}, got {config[key]}")


def model_args(config, task):
    """GPTConfig keyword arguments from the keys of config that name its fields; the task fixes vocab_size,
    n_class and pad_id (a config may only repeat them), and block_size 0 means the task's sequence length.
    Raises ValueError when block_size is below the task's sequence length, n_class or pad_id differ from the
    task's, a size is out of range (check_shape), or causal=False meets a task whose inputs hold its answers."""
    check_shape({k: v for k, v in config.items() if k != 'vocab_size'})
    args = {f.name: config[f.name] for f in fields(GPTConfig) if f.name in config}
    fixed = dict(vocab_size=task.vocab_size, n_class=task.n_class, pad_id=task.pad_id)
    for key, default in (('n_class', 0), ('pad_id', -1)):
        if args.get(key, default) not in (default, fixed[key]):
            raise ValueError(f"--{key} is the task's ({fixed[key]} here), got {args[key]}")
    args.update(fixed, block_size=config.get('block_size') or task.block_size)
    if task.block_size > args['block_size']:
        raise ValueError(f"the task's sequences have length {task.block_size} > block_size={args['block_size']}")
    if task.causal_only and not args.get('causal', True):
        raise ValueError(f"--causal=False: {task.name}'s inputs hold each answer after the position that predicts "
                         f"it, so a non-causal model would read it")
    return args


def load_checkpoint(path, keys=('model', 'model_args'), trained_only=False):
    """The dict that train.py saved at path (ckpt.pt or ckpt_best.pt), loaded onto the CPU with
    torch.load(weights_only=True): tensors and plain values only, nothing in the file is executed. keys: what
    it must hold; trained_only: whether a ckpt.pt of only the trained weights (train.py checkpoint_frozen=False;
    its 'frozen' holds the others' frozen_fingerprint) will do, as for resuming. Raises ValueError, one line
    naming the file, when the file is missing, a folder, empty, truncated, not a torch file, lacks one of keys,
    or holds only the trained weights where trained_only is False."""
    if not os.path.exists(path):
        raise ValueError(f"{path} does not exist")
    if not os.path.isfile(path):
        raise ValueError(f"{path} is not a file")
    if os.path.getsize(path) == 0:
        raise ValueError(f"{path} is empty (0 bytes), not a checkpoint")
    try:
        obj = torch.load(path, map_location='cpu', weights_only=True)
    except Exception as e:     # zip / pickle / EOF errors of a truncated or foreign file
        raise ValueError(f"{path} is not a readable checkpoint (truncated, or not a torch file: "
                         f"{type(e).__name__})") from None
    missing = [k for k in keys if not isinstance(obj, dict) or k not in obj]
    if missing:
        raise ValueError(f"{path} is not a checkpoint of train.py (it has no {missing[0]!r})")
    if 'frozen' in obj and not trained_only:
        raise ValueError(f"{path} holds only the trained weights (a run with checkpoint_frozen=False): use the "
                         f"ckpt_best.pt beside it, or train on from it with --init_from=resume")
    return obj


def model_from_checkpoint(checkpoint, path):
    """The GPT (on the CPU, in eval mode) that a train.py checkpoint read from path holds, every weight in place:
    checkpoint is load_checkpoint(path, keys=('model', 'model_args', 'config'), trained_only=True). A ckpt.pt of
    the trained weights only (checkpoint_frozen=False) has its frozen ones drawn again as train.py draws them
    (torch.manual_seed(config['seed']), then paper 2's construction when the config names one) and checked
    against the fingerprints it keeps. Raises ValueError naming path when the weights do not fit the model or
    the frozen ones rebuilt differ from the run's (another torch version or construction)."""
    frozen = checkpoint.get('frozen')
    config = checkpoint['config']
    with torch.random.fork_rng(devices=[]):                  # the caller's random state is left as it was
        torch.manual_seed(config.get('seed', 1337))
        model = GPT(GPTConfig(**checkpoint['model_args']))
    if frozen is not None and config.get('construction'):
        universal.write_construction(model, config['construction'])
    load_weights(model, checkpoint['model'], path, without=frozen or ())
    if frozen is not None:
        differ = frozen_mismatch(frozen, model)
        if differ:
            raise ValueError(f"{path} holds only the trained weights, and the frozen ones rebuilt from its config "
                             f"differ from the run's ({differ[0]}): another torch version or construction?")
    return model.eval()


def frozen_fingerprint(model):
    """{name: SHA-256 of the tensor's bytes} for every parameter with requires_grad False (a frozen weight, which
    the optimizer never sees): what a ckpt.pt without them (train.py checkpoint_frozen=False) keeps, so that a
    resumed run can check the weights it rebuilds from the config."""
    return {name: hashlib.sha256(p.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy()).hexdigest()
            for name, p in model.named_parameters() if not p.requires_grad}


def frozen_mismatch(frozen, model):
    """The names, sorted, of the frozen weights whose fingerprint in model differs from frozen (a ckpt.pt's
    'frozen', from frozen_fingerprint), or that only one of the two has: [] when the rebuilt weights are the run's."""
    rebuilt = frozen_fingerprint(model)
    return sorted(name for name in frozen.keys() | rebuilt.keys() if frozen.get(name) != rebuilt.get(name))


_locks = {}                     # folder (real path) -> its open lock file, for this process's life


def lock_dir(path):
    """Make the folder path and hold an exclusive lock on path/.lock (fcntl.flock) until the process ends, however
    it ends (the OS lets go), so that no two runs write one out_dir; the lock file holds the holder's PID. A
    folder this process locked before (a run started again in the same process) is locked anew. Raises
    ValueError naming the holder's PID when another process holds it, or naming the folder when it cannot be
    made or written."""
    import fcntl
    key = os.path.realpath(path)
    if key in _locks:
        _locks.pop(key).close()
    try:
        os.makedirs(path, exist_ok=True)
        lock = open(os.path.join(path, '.lock'), 'a+')
    except OSError as e:
        raise ValueError(f"cannot write in --out_dir={path}: {e.strerror}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or 'unknown'
        lock.close()
        raise ValueError(f"--out_dir={path} is in use by another run (PID {holder}); wait for it to end, or choose "
                         f"another out_dir") from None
    lock.truncate(0)
    lock.write(f'{os.getpid()}\n')
    lock.flush()
    _locks[key] = lock


def load_weights(model, state_dict, path, without=()):
    """model.load_state_dict(state_dict) (weights read from path); without: names of the model's weights that
    state_dict leaves out (a ckpt.pt's frozen ones), which keep their values. Raises ValueError naming path and
    the first weight that is missing, extra or of another shape."""
    if not isinstance(state_dict, dict) or not all(isinstance(v, torch.Tensor) for v in state_dict.values()):
        raise ValueError(f"{path} holds no weights (a state_dict, or a checkpoint with one under 'model')")
    own = {name: t for name, t in model.state_dict().items() if name not in without}
    for key, value in own.items():
        if key not in state_dict:
            raise ValueError(f"{path} does not fit this model: it has no {key}")
        if state_dict[key].shape != value.shape:
            raise ValueError(f"{path} does not fit this model: {key} is {tuple(state_dict[key].shape)} there, "
                             f"{tuple(value.shape)} here")
    extra = [k for k in state_dict if k not in own]
    if extra:
        raise ValueError(f"{path} does not fit this model: it has {extra[0]}, which this model has not")
    model.load_state_dict(state_dict, strict=not without)


# ----------------------------------------------------------------------------- memory


def memory_estimate(config, micro_batch_size, T, dtype, device_type):
    """Rough bytes a training step of the model of GPTConfig config holds at its peak, as (total, {part: bytes}):
    fp32 weights and buffers; per trainable parameter a gradient and AdamW's two moments (12 bytes), plus a
    16-bit copy of the weights under autocast (dtype bfloat16 / float16); activations kept for the backward of
    one micro-batch of micro_batch_size * T tokens, (34 n_embd + n_head T) values per token and layer
    (Korthikanti et al. 2022, with attention scores) at 2 bytes for bf16/fp16 and 4 for fp32 (8 for float64,
    whose weights are 8 bytes too); and the output layer's (model.ChunkedHeadLoss): one chunk's logits and their
    fp32 log-softmax, and under autocast W's 16-bit copy and a chunk's W gradient in 16 and 32 bits. An upper
    estimate (bench.py's step_memory measures it). Raises ValueError for an impossible shape."""
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


def available_memory(device, device_type):
    """Bytes the device can still give: a GPU's free memory (torch.cuda.mem_get_info), a CPU's MemAvailable
    (/proc/meminfo; else the free physical pages from os.sysconf). None when unknown (MPS)."""
    if device_type == 'cuda':
        return torch.cuda.mem_get_info(device)[0]
    if device_type != 'cpu':
        return None
    try:
        with open('/proc/meminfo') as f:
            for line in f:
                if line.startswith('MemAvailable:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf('SC_AVPHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')
    except (ValueError, OSError, AttributeError):
        return None


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


def allow_tf32():
    """Let float32 matmuls and convolutions on CUDA use TF32 tensor cores (nanoGPT's setting), through the
    fp32_precision settings where this torch has them (the allow_tf32 flags are deprecated after 2.9)."""
    if hasattr(torch.backends.cuda.matmul, 'fp32_precision'):
        torch.backends.cuda.matmul.fp32_precision = 'tf32'
        torch.backends.cudnn.conv.fp32_precision = 'tf32'
    else:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def resolve_dtype(dtype, device_type, float64=False):
    """'auto' -> bf16 on a GPU that has it (else fp16), fp32 on MPS, and on a CPU whichever of bf16 and fp32
    its matmuls run faster (auto_cpu_dtype). float64: also accept 'float64' (train.py's whole model in double
    precision, a check of rounding; not on MPS). Returns (dtype name, note): the note gives the CPU
    measurement behind the choice ('' otherwise). Raises ValueError for another name."""
    note = ''
    if dtype == 'auto' and device_type == 'cpu':
        dtype, bf16, fp32 = auto_cpu_dtype()
        note = f" (auto: matmul bf16 {bf16 / 1e9:.1f} vs fp32 {fp32 / 1e9:.1f} GFLOP/s)"
    elif dtype == 'auto':
        dtype = 'float32' if device_type == 'mps' else 'bfloat16' if torch.cuda.is_bf16_supported() else 'float16'
    names = DTYPES + (('float64',) if float64 else ())
    if dtype not in names:
        raise ValueError(f"dtype must be auto, {', '.join(names)}, got {dtype!r}")
    if dtype == 'float64' and device_type == 'mps':
        raise ValueError("dtype='float64': MPS has no float64")
    return dtype, note


# ----------------------------------------------------------------------------- what a compiled backward recomputes

# The min-cut partitioner's bans on recomputing an op (torch._functorch.config): one used far from where it was
# made, one in a long chain of fusible ops, one whose output the backward materialises anyway.
POINTWISE_RECOMPUTE_BANS = ('ban_recompute_used_far_apart', 'ban_recompute_long_fusible_chains',
                            'ban_recompute_materialized_backward')


def partitioner_settings(activation_memory_budget=1.0, recompute_pointwise=False):
    """torch._functorch.config settings that decide, when torch.compile splits a training step into forward and
    backward graphs, which activations the backward keeps and which it recomputes. The defaults are torch's.
    recompute_pointwise: the three bans above are lifted, so the backward recomputes any pointwise op (norms,
    rotary, SiLU, casts) whose output it would otherwise keep, when that keeps fewer bytes; matmuls and
    attention, outside the partitioner's allowlist, are still never recomputed. activation_memory_budget in
    [0, 1]: below 1, the fraction of those activations to keep, the cheapest ops (by FLOPs) recomputed to fit
    it, matmuls and attention included; 0 keeps only the graph's inputs. Returns a dict for
    torch._functorch.config.patch."""
    return dict(activation_memory_budget=activation_memory_budget,
                **{ban: not recompute_pointwise for ban in POINTWISE_RECOMPUTE_BANS})


# ----------------------------------------------------------------------------- peak FLOP/s for MFU

# Dense (no sparsity) bf16 tensor-core peaks from NVIDIA's data sheets, FLOP/s; the first name contained in
# torch.cuda.get_device_name() wins, so the specific names come first.
PEAK_FLOPS = {
    'H100 PCIe': 756e12,
    'H100 NVL': 835e12,
    'H100': 989e12,             # SXM
    'H200': 989e12,
    'A100': 312e12,
}


def peak_flops(device, device_type, dtype):
    """(FLOP/s, source) that MFU is measured against. On a GPU its dense tensor-core peak in the step's dtype:
    PEAK_FLOPS (bf16 = fp16) and half of it for float32, which runs as TF32 (allow_tf32); 0.0 when the GPU's
    name is not listed, and for float64. On a CPU cpu_peak_flops in dtype (a torch dtype name: what the step
    multiplies in) with torch's current threads, measured once per machine and cached. 0.0 on other devices."""
    if device_type == 'cuda':
        gpu = torch.cuda.get_device_name(device)
        peak = next((v for k, v in PEAK_FLOPS.items() if k in gpu), 0.0)
        if not peak or dtype == 'float64':
            return 0.0, f'{gpu} not in PEAK_FLOPS' if not peak else 'no float64 peak'
        return (peak / 2, f'PEAK_FLOPS[{gpu}] / 2, TF32') if dtype == 'float32' else (peak, f'PEAK_FLOPS[{gpu}]')
    if device_type == 'cpu':
        return cpu_peak_flops(dtype)
    return 0.0, f'no peak for {device_type}'


# ----------------------------------------------------------------------------- CPU


def cpu_matmul_flops(dtype, n=4096, reps=5):
    """FLOP/s of the fastest of reps (n, n) @ (n, n) matmuls in dtype (a torch.dtype) on the CPU, with torch's
    current number of threads, after one untimed matmul: bench.py's CPU peak for MFU (n = 4096: 0.1-0.7 s per
    matmul on 2 cores where the dtype has fast kernels; cpu_matmul_size picks n where it may not). Measured once
    per process for each (dtype, n, reps, threads)."""
    return _cpu_matmul_flops(dtype, n, reps, torch.get_num_threads())


@functools.lru_cache(maxsize=None)
def _cpu_matmul_flops(dtype, n, reps, threads):   # threads: part of the cache key only
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    best = float('inf')
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best


def cpu_matmul_size(dtype, n, max_s=4.0, probe_n=256):
    """The size m <= n of the square matmuls in dtype (a torch.dtype) that cpu_matmul_flops times so that one
    takes about max_s seconds or less: n, halved while a 2 m^3-FLOP matmul at the rate of a probe_n^3 one (the
    best of 3) would take longer, never below probe_n. A CPU's rate in a dtype spans three orders of magnitude:
    bf16 at 0.16-0.85 TFLOP/s on 2 cores with bf16 units, about 1 GFLOP/s without (an AVX2-only AMD EPYC,
    where one 4096^3 matmul takes over two minutes); the probe (1 ms to 0.1 s) keeps every measurement short.
    A small matmul runs below a fast CPU's peak (fp32 on 2 cores: 0.06-0.1 TFLOP/s at 256^3, 0.18 at 4096^3),
    so m errs small."""
    if n <= probe_n:
        return n
    rate = cpu_matmul_flops(dtype, probe_n, reps=3)
    m = n
    while m > probe_n and 2 * m ** 3 / rate > max_s:
        m = max(m // 2, probe_n)
    return m


def cpu_model():
    """The CPU's model name (/proc/cpuinfo's 'model name', else platform.processor()), or 'unknown CPU'."""
    import platform
    try:
        with open('/proc/cpuinfo') as f:
            return next(line.split(':', 1)[1].strip() for line in f if line.startswith('model name'))
    except (OSError, StopIteration):
        return platform.processor() or 'unknown CPU'


def cpu_peak_flops(dtype, n=2048):
    """(FLOP/s, source): the CPU peak that train.py's MFU is measured against, cpu_matmul_flops of an (m, m)
    matmul in dtype (a torch dtype name) with torch's current threads, m = cpu_matmul_size(dtype, n) (n where
    the dtype is fast), measured the first time on a machine and read back after from a cache ($XDG_CACHE_HOME
    or ~/.cache, learned-transformer/cpu_peak.json, keyed by CPU model, torch version, dtype, threads and n), so
    that two runs' MFU compare their speed and not the load of the moment they started (n = 2048: 2 s or less
    on one core). Where the cache cannot be written the measurement is used uncached, and the source says so."""
    import json
    threads = torch.get_num_threads()
    path = os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'learned-transformer',
                        'cpu_peak.json')
    key = f'{cpu_model()} | torch {torch.__version__} | {dtype} | {threads} thread(s) | {n}^3'
    try:
        with open(path) as f:
            cache = json.load(f)
        if not isinstance(cache, dict):
            cache = {}
    except (OSError, ValueError):
        cache = {}
    entry = cache.get(key)
    if (isinstance(entry, dict) and isinstance(entry.get('flops'), (int, float)) and entry['flops'] > 0
            and isinstance(entry.get('n'), int)):
        return float(entry['flops']), f"{entry['n']}^3 {dtype} matmul on {threads} thread(s), cached in {path}"
    m = cpu_matmul_size(getattr(torch, dtype), n)
    flops = cpu_matmul_flops(getattr(torch, dtype), m)
    cache[key] = {'flops': flops, 'n': m}
    what = f'{m}^3 {dtype} matmul on {threads} thread(s)'
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + f'.{os.getpid()}.tmp', 'w') as f:
            json.dump(cache, f, indent=1)
        os.replace(path + f'.{os.getpid()}.tmp', path)
    except OSError as e:
        return flops, f'{what}, measured now (not cached: {e.strerror})'
    return flops, f'{what}, measured now and cached in {path}'


def auto_cpu_dtype(n=1024, max_s=0.05):
    """'bfloat16' (autocast) when this CPU multiplies bf16 matrices faster than fp32 ones, else 'float32'.
    Returns (name, bf16 FLOP/s, fp32 FLOP/s) from cpu_matmul_flops of both dtypes at one size, n or the
    smaller cpu_matmul_size of the two at max_s seconds a matmul (0.1-0.3 s in all). Which wins depends on the
    chip: bf16 on CPUs with AMX or fast bf16 units (one AMD EPYC: 2-4x fp32), fp32 on an Intel Xeon with
    avx512_bf16 but no AMX (bf16 at half fp32's speed) and on CPUs without bf16 units (an AVX2-only AMD EPYC:
    bf16 at 1/100 of fp32); docs/performance.md has the rates."""
    m = min(cpu_matmul_size(torch.bfloat16, n, max_s), cpu_matmul_size(torch.float32, n, max_s))
    bf16, fp32 = cpu_matmul_flops(torch.bfloat16, m), cpu_matmul_flops(torch.float32, m)
    return ('bfloat16' if bf16 > fp32 else 'float32'), bf16, fp32


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
    grew to 23.3 GiB (killed) where the default allocator peaks at 12.8 (docs/performance.md#kept-memory).
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
