"""
The machine a run is on: its device and dtype ('auto' resolved), what it can do (peak FLOP/s for MFU, the CPU's
measured matmul rate) against what a step needs (model FLOPs per token), and the settings that make a step faster
on it (TF32, what a compiled backward recomputes). Its memory is memory.py's.
"""

import datetime
import functools
import json
import os
import platform
import sys
import threading
import time

import torch
import torch.distributed

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


def init_process_group(device, device_type, backend, batch_size, timeout=600.0):
    """Join torchrun's process group (RANK, LOCAL_RANK, WORLD_SIZE in the environment): backend '' is nccl on
    CUDA, gloo on a CPU; on CUDA each local rank takes its GPU (gloo lets several share one, a test of the
    multi-process logic). timeout: seconds a collective waits for the other processes before it fails (gloo:
    raises RuntimeError, which run_guard.collective_faults reports; NCCL: its watchdog ends the process). Returns
    (rank, world_size, device). Raises ValueError when torchrun's variables are missing (RANK set by hand), batch_size
    does not divide among the processes, timeout is not > 0, or NCCL finds no GPU for a rank."""
    missing = [k for k in ('LOCAL_RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT') if k not in os.environ]
    if missing:
        raise ValueError(f"RANK is set but {missing[0]} is not: start the processes with torchrun (or unset RANK "
                         f"to run one process)")
    rank, local_rank, world_size = (int(os.environ[k]) for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE'))
    if not timeout > 0:
        raise ValueError(f"--ddp_timeout must be > 0 (seconds), got {timeout}")
    if batch_size % world_size:
        raise ValueError(f"--batch_size={batch_size} must be divisible by the number of processes ({world_size})")
    backend = backend or ('nccl' if device_type == 'cuda' else 'gloo')
    if device_type == 'cuda':
        if backend == 'nccl' and local_rank >= torch.cuda.device_count():
            raise ValueError(f"local rank {local_rank} has no GPU of its own ({torch.cuda.device_count()} here): "
                             f"NCCL needs one per process (--ddp_backend=gloo shares them, to test the multi-process "
                             f"logic)")
        device = f'cuda:{local_rank % torch.cuda.device_count()}'
        torch.cuda.set_device(device)
    where = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    waiting = threading.Timer(5.0, lambda: print(
        f"rank {rank}: waiting at {where} for the other {world_size - 1} process(es) of {world_size} (gives up after "
        f"--ddp_timeout={timeout:g} s)", file=sys.stderr, flush=True))
    waiting.daemon = True
    waiting.start()                                 # said once, if the rendezvous takes more than 5 s
    try:
        torch.distributed.init_process_group(backend=backend,      # with device_id, NCCL binds the rank's GPU
                                             device_id=torch.device(device) if backend == 'nccl' else None,
                                             timeout=datetime.timedelta(seconds=timeout))
    except (RuntimeError, TimeoutError, OSError) as e:        # a peer that never came, a port in use
        raise ValueError(f"rank {rank}: the process group at {where} did not form within --ddp_timeout={timeout:g} s "
                         f"({type(e).__name__}: {(str(e).splitlines() or [''])[0][:120]})") from None
    finally:
        waiting.cancel()
    return rank, world_size, device


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


# ----------------------------------------------------------------------------- FLOPs: a step's and a device's

def flops_per_token(model, T, scored=1.0):
    """Model FLOPs of one training step (forward + backward) of model, a model.GPT, per token at sequence length T:
    matmuls only, nothing recomputed; for MFU multiply by tokens/s (FLOP/s). The output layer counts at the share
    `scored` of tokens that have a target (head_loss.ChunkedHeadLoss skips the others; 1 for language modeling).
    A linear in -> out costs 2*in*out forward, 2*in*out for its input gradient (every variant trains wte, so
    input gradients are always needed) and 2*in*out for its weight gradient only when the weight is trainable.
    Attention is counted as the work it needs: causal, the token at position t (1-based) attends to t positions,
    (T+1)/2 on average; non-causal, to all T. Softmax: S = q k^T, y = P v forward; dP, dv, dq, dk backward.
    MixiT: y = A v forward, dv = A^T dy backward (A is a fixed buffer: no dA, no q, k or scores). Embeddings,
    norms, activations, rotary, loss, optimizer: not counted."""
    def linear(m):
        return 2 * m.in_features * m.out_features * (3 if m.weight.requires_grad else 2)

    Tc = (T + 1) / 2 if model.config.causal else T
    flops = 0.0
    for block in model.transformer.h:
        a = block.attn
        flops += linear(a.c_v) + (linear(a.c_proj) if a.c_proj is not None else 0)
        if a.mixit:
            flops += 2 * 2 * Tc * a.n_head * a.v_dim
        else:
            flops += linear(a.c_q) + linear(a.c_k) + 3 * 2 * Tc * a.n_head * (a.head_dim + a.v_dim)
        if block.mlp is not None:
            flops += sum(linear(m) for m in (block.mlp.c_gate, block.mlp.c_up, block.mlp.c_proj))
    flops *= model.config.n_layer if model.config.looped else 1     # looped: one block applied n_layer times
    return flops + scored * linear(model.lm_head)


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
    try:
        with open('/proc/cpuinfo') as f:
            return next(line.split(':', 1)[1].strip() for line in f if line.startswith('model name'))
    except (OSError, StopIteration):
        return platform.processor() or 'unknown CPU'


PEAK_MAX_AGE_S = 30 * 24 * 3600   # a cached CPU peak older than this is measured again
PEAK_MAX_LOAD = 0.75              # ... and one measured while the load average per core was above this


def load_per_core():
    """The 1-minute load average over the CPU count (0.0 where the OS gives none)."""
    return os.getloadavg()[0] / (os.cpu_count() or 1) if hasattr(os, 'getloadavg') else 0.0


def cpu_peak_flops(dtype, n=2048, floor=0.0):
    """(FLOP/s, source): the CPU peak that train.py's MFU is measured against, cpu_matmul_flops of an (m, m)
    matmul in dtype (a torch dtype name) with torch's current threads, m = cpu_matmul_size(dtype, n) (n where
    the dtype is fast), measured the first time on a machine and read back after from a cache ($XDG_CACHE_HOME
    or ~/.cache, learned-transformer/cpu_peak.json, keyed by CPU model, torch version, dtype, threads and n), so
    that two runs' MFU compare their speed and not the load of the moment they started (n = 2048: 2 s or less
    on one core). A cached peak is measured again when it is below floor (FLOP/s a step achieved: it cannot be
    the peak), older than PEAK_MAX_AGE_S, or was measured while the load average per core exceeded
    PEAK_MAX_LOAD (other jobs held the cores) and the load is below it now; each entry keeps its time and load.
    Where the cache cannot be written the measurement is used uncached, and the source says so."""
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
    number = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)
    if (isinstance(entry, dict) and number(entry.get('flops')) and entry['flops'] > max(floor, 0)
            and isinstance(entry.get('n'), int) and number(entry.get('time'))
            and time.time() - entry['time'] < PEAK_MAX_AGE_S and number(entry.get('load'))
            and (entry['load'] <= PEAK_MAX_LOAD or load_per_core() > PEAK_MAX_LOAD)):
        return float(entry['flops']), (f"{entry['n']}^3 {dtype} matmul on {threads} thread(s), cached in {path} "
                                       f"{time.strftime('%Y-%m-%d', time.localtime(entry['time']))}")
    load = load_per_core()
    _cpu_matmul_flops.cache_clear()                  # measured anew, not this process's earlier number
    m = cpu_matmul_size(getattr(torch, dtype), n)
    flops = cpu_matmul_flops(getattr(torch, dtype), m)
    cache[key] = {'flops': flops, 'n': m, 'time': time.time(), 'load': round(load, 2)}
    what = f'{m}^3 {dtype} matmul on {threads} thread(s)' + (f', load {load:.2f} per core' if load > PEAK_MAX_LOAD
                                                               else '')
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
