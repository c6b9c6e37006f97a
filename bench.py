"""
Training throughput of any model config: tokens/s, ms/iter, model FLOPs per token, achieved FLOP/s and MFU,
peak memory, and — for several variants in one run — each variant's speedup over `standard` beside the
speedup its FLOP count predicts.

    python bench.py                                                # a CPU: a small shape, about a minute
    python bench.py --shape=lm                                     # paper 1's LM shape (a GPU's default)
    python bench.py --variants=standard,frozen_qk,frozen_mlp,mixit --batch_size=1
    python bench.py --compile=False --dtype=float32                # nanoGPT's way on a CPU: fp32 eager
    python bench.py config/fineweb_mixit.py --device=cuda --json_out=out/bench.json
    python bench.py --against=hf --rounds=5                        # beside Hugging Face's LlamaForCausalLM

--against=hf adds Hugging Face's LlamaForCausalLM with the standard variant's shape (bench.hf_llama), trained
by the same step with torch's AdamW, and prints each model's tokens/s and peak memory over its. Compiled, ours
split their forward and backward graphs as train.py does: by default (--recompute_pointwise) the backward
recomputes pointwise ops rather than keep their outputs, never a matmul or attention; --activation_memory_budget
below 1 keeps only that fraction of the activations, recomputing the cheapest ops, matmuls included
(hardware.partitioner_settings). Hugging Face's model is compiled with torch's defaults.
--compile_mode picks torch.compile's mode for ours ('' torch's default; 'max-autotune-no-cudagraphs' autotunes
matmul and Triton kernels; 'reduce-overhead' replays the compiled graphs as CUDA graphs; 'max-autotune' both), and
--optimizer_impl AdamW's implementation for every model ('fused', one kernel over all tensors, ours on a CPU or
GPU and Hugging Face's on a GPU, as train.py; 'foreach', a few kernels per group of tensors); both are in the
first line and the JSON, the optimizer each model really stepped with in its results ('optimizer').

A step is what train.py does: grad_accum micro-batches of forward + backward under autocast, gradient
clipping, an AdamW step over the trainable parameters, zero_grad. The data are random tokens made on the
device before timing (no loader, no host-device copy in the loop). The first `warmup` steps (compilation
included) are not timed; each timed step ends with a device synchronisation, and ms/iter is the median of
`iters` timed steps. With `rounds` > 1 the timed steps are split into rounds that visit the variants in
turn, so that a machine whose load drifts slows every variant alike (all models then live at once).

--shape sets the model's keys that no flag or config file sets: 'lm', paper 1's language model (12 layers of width
512, 8 heads, vocabulary 50,304, T 1024), the default on a GPU or with a config file (train.py's model); 'small',
4 layers of width 256, 4 heads, T 256, the default otherwise (about a minute on a CPU, compilation included).

A train.py config file sets the model's shape, batch and system keys; its task sizes the vocabulary and the
sequence length (the LM and sentiment tasks without prepared data: GPT-2's 50,304 and block_size, 256 if unset);
its schedule, data and I/O keys are ignored. With a config, bench.py also times how long the task takes to draw
one global batch on the host (`data ms`, the median of data_iters draws after one untimed): unless a worker
process draws them (train.py --prefetch), train.py draws each step's batch before the step, so a step takes at
least this long.

FLOP convention (hardware.flops_per_token): matmul FLOPs of one training step, per token, nothing recomputed.
  - a linear layer in -> out: forward 2*in*out, input gradient 2*in*out, weight gradient 2*in*out only when
    its weight is trainable (every variant trains the token embedding, so input gradients are always needed);
  - attention is causal and counted as the work it needs: the token at position t (1-based) attends to t
    positions, (T+1)/2 on average. Softmax attention: S = q k^T and y = P v forward, dP, dv, dq, dk backward,
    so 6 * (T+1)/2 * n_head * (head_dim + v_dim). MixiT: y = A v forward and dv = A^T dy backward (A is a fixed
    buffer, no dA), so 4 * (T+1)/2 * n_head * v_dim — it computes no q, k, no scores;
  - embeddings (gathers), norms, activations, softmax, rotary, the loss and the optimizer are not counted.
  The kernels do more than this count: flash attention recomputes S in its backward, and MixiT's matmul runs the
  whole T x T block although A is lower triangular, so both run about twice their counted attention work.
MFU = achieved model FLOP/s / the device's peak: on a GPU its dense peak in the step's dtype (hardware.peak_flops),
on a CPU train.py's peak (hardware.cpu_peak_flops: the best of a few square matmuls of cpu_peak_n in the dtype
the step multiplies in, smaller ones in a dtype the CPU has no fast kernels for, measured once per
machine, dtype and thread count and cached), so that bench.py and train.py report the same MFU for the same step.
--dtype=auto (the default) trains in bf16 on a GPU and, on a CPU, in bf16 only where the CPU multiplies bf16
faster than fp32 (hardware.auto_cpu_dtype), as train.py does.
On a CPU, `cpu share` is the CPU time the process got per wall-clock second and thread during the timed steps
(spin-waiting threads included): well below 100% means other processes shared the cores, and the timings are
then not the machine's. --cpu_keep_memory=True (as in train.py) first tells glibc's malloc to keep freed memory
for reuse (memory.keep_freed_memory): the step's large tensors stop page-faulting in afresh;
docs/performance.md has the numbers, and the case against making it the default.
"""

import gc
import json
import os
import resource
import statistics
import sys
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch._functorch.config
from tqdm import tqdm

from configurator import at_least, configure, declare, fail
from files import output_file, output_folder
from hardware import (allow_tf32, cpu_peak_flops, flops_per_token, partitioner_settings, peak_flops as device_peak,
                      resolve_device, resolve_dtype)
from head_loss import HeadLoss
from memory import (ResidentPeak, available_memory, keep_freed_memory, memory_estimate, release_free_memory,
                    resident_bytes)
from model import GPT, GPTConfig, VARIANTS
from runconfig import check_shape, make_task

_HF = 'hf_llama'                 # Hugging Face's LlamaForCausalLM among the timed variants (--against=hf)
SMALL = dict(n_layer=4, n_head=4, n_embd=256, block_size=256)     # --shape=small: 2,048 tokens per step

# ----------------------------------------------------------------------------- model (paper 1's LM shape)
declare(globals(), GPTConfig)   # every GPTConfig field is a key (python bench.py --help)
block_size = 1024               # sequence length of every timed batch
shape = 'auto'                  # lm: these keys' defaults, paper 1's LM shape; small: SMALL over them, about a
                                # minute on a CPU; auto: lm on a GPU or with a config file, else small
variants = ()                   # variants to compare in one run, e.g. standard,frozen_qk,frozen_mlp,mixit
against = ''                    # 'hf': also time Hugging Face's LlamaForCausalLM of the same shape (hf_llama)
# ----------------------------------------------------------------------------- step (as train.py)
batch_size = 8                  # sequences per optimizer step
micro_batch_size = 0            # sequences per forward pass; 0: batch_size
learning_rate = 1e-3            # AdamW's rate in the timed steps
weight_decay = 0.1              # AdamW's weight decay
beta1 = 0.9                     # AdamW's first-moment decay
beta2 = 0.95                    # AdamW's second-moment decay
grad_clip = 1.0                 # gradient-norm clipping, as train.py (0: off)
# ----------------------------------------------------------------------------- timing
warmup = 3                      # untimed steps (the first compiles)
iters = 10                      # timed steps; the median is reported
rounds = 1                      # >1: interleave the variants' timed steps in this many rounds
peak_flops = 0.0                # FLOP/s for MFU; 0: PEAK_FLOPS for a GPU, measured on a CPU
data_iters = 5                  # a train.py config: timed draws of a global batch from its task (0: none)
cpu_peak_n = 2048               # size of the square matmuls that measure a CPU's peak (at most; train.py's: 2048)
json_out = ''                   # also write the results to this file
profile = ''                    # profile one extra step per model: print its costliest ops, and write Chrome
                                # traces to <profile>_<variant>.json (chrome://tracing, ui.perfetto.dev)
# ----------------------------------------------------------------------------- system
device = 'auto'                 # auto | cpu | cuda | cuda:N
dtype = 'auto'                  # auto | bfloat16 | float16 | float32 (auto on a CPU: its faster matmul)
compile = True                  # torch.compile each model
compile_mode = ''               # compiled: torch.compile's mode for ours: '' (torch's default), max-autotune,
                                # max-autotune-no-cudagraphs, reduce-overhead (Hugging Face's: torch's default)
optimizer_impl = 'fused'        # AdamW: fused (train.py's: ours on cpu or cuda, Hugging Face's on cuda) | foreach
recompute_pointwise = True      # compiled: the backward recomputes pointwise ops, never a matmul (as train.py)
fused_loss = True               # compiled on a GPU: the head's softmax step compiled, as in train.py (HeadLoss)
activation_memory_budget = 1.0  # compiled: below 1, keep this fraction of the activations (as train.py);
                                # Hugging Face's model is compiled with torch's defaults
cpu_keep_memory = False         # CPU: malloc keeps freed memory for the next step (memory.keep_freed_memory)
memory_check = True             # refuse a model + batch whose estimated memory (memory.memory_estimate) exceeds what
                                # the device has available; False: try anyway
seed = 1337                     # the models' init and the batches
# -----------------------------------------------------------------------------
train_keys = {}                 # a train.py config's task, schedule and I/O keys, which bench.py does not use
cli_given = {}                  # {key: 'flag' or its config file} for every key the command line sets
config = configure(globals(), foreign=train_keys, given=cli_given)

try:
    device, device_type = resolve_device(device)
except ValueError as e:
    fail(e)
if shape not in ('auto', 'lm', 'small'):
    fail(f"--shape must be 'auto', 'lm' or 'small', got {shape!r}")
by_default = shape == 'auto'
if shape == 'auto':     # a config file's model is train.py's: GPTConfig's defaults under the file's keys
    config_file = bool(train_keys) or any(source != 'flag' for source in cli_given.values())
    shape = 'lm' if device_type == 'cuda' or config_file else 'small'
small = {k: v for k, v in SMALL.items() if shape == 'small' and k not in cli_given}   # not set by a flag or file
for key, value in small.items():
    config[key] = globals()[key] = value
config['shape'] = shape

T = block_size                  # length of the timed sequences
data = None                     # a train.py config's task, whose batches are timed
if train_keys.get('task'):      # a train.py config: the task sizes the vocabulary and the sequences
    name = train_keys['task']
    try:
        given = {'block_size': block_size} if 'block_size' in cli_given else {}   # lm, sentiment: their length
        data = make_task(dict(train_keys, **given), n_test=None if data_iters else 1)   # the draws avoid its test set
        task_vocab, T = data.vocab_size, data.block_size
    except ValueError as e:     # the text tasks without prepared data: GPT-2's vocabulary, block_size or 256
        if name not in ('lm', 'sentiment'):
            fail(e)
        task_vocab, T = GPTConfig.vocab_size, given.get('block_size', 256)
        print(f"note: {name} data not prepared ({str(e).splitlines()[0][:80]}); GPT-2 vocabulary {task_vocab}")
    if cli_given.get('vocab_size') != 'flag':
        config['vocab_size'] = task_vocab
    if not (cli_given.get('block_size') == 'flag' and block_size):
        config['block_size'] = T
try:
    check_shape(config)
except ValueError as e:
    fail(e)
if T < 1 or T > config['block_size']:
    fail(f"sequence length {T} must be between 1 and block_size={config['block_size']}")
vocab_size = config['vocab_size']

names = list(variants) or [config['variant']]
for v in names:
    if v not in VARIANTS:
        fail(f"unknown variant {v!r} in variants; choose from {', '.join(VARIANTS)}")
COMPILE_MODES = ('', 'max-autotune', 'max-autotune-no-cudagraphs', 'reduce-overhead')
if compile_mode not in COMPILE_MODES:
    fail(f"--compile_mode must be one of {', '.join(repr(m) for m in COMPILE_MODES)}, got {compile_mode!r}")
if optimizer_impl not in ('fused', 'foreach'):
    fail(f"--optimizer_impl must be 'fused' or 'foreach', got {optimizer_impl!r}")
cudagraphs = compile and compile_mode in ('reduce-overhead', 'max-autotune')    # ours replayed as CUDA graphs
if against not in ('', 'hf'):
    fail(f"--against must be '' or 'hf', got {against!r}")
if against == 'hf':
    try:
        import transformers
    except ImportError:
        fail("--against=hf needs Hugging Face transformers: pip install transformers")
    names.append(_HF)
try:
    if device_type == 'mps':
        raise ValueError("bench.py times cpu or cuda, not mps")
    kept = device_type == 'cpu' and cpu_keep_memory and keep_freed_memory()
    fused_loss = fused_loss and compile and device_type == 'cuda'     # head_loss.HeadLoss's fused, for our models
    dtype, _ = resolve_dtype(dtype, device_type)
except ValueError as e:
    fail(e)
at_least(1, batch_size=batch_size, vocab_size=vocab_size, cpu_peak_n=cpu_peak_n)
at_least(0, micro_batch_size=micro_batch_size, warmup=warmup, peak_flops=peak_flops, data_iters=data_iters,
         weight_decay=weight_decay, grad_clip=grad_clip)
if not learning_rate > 0:
    fail(f"--learning_rate must be > 0, got {learning_rate}")
if not 0 <= activation_memory_budget <= 1:
    fail(f"--activation_memory_budget must be in [0, 1], got {activation_memory_budget}")
for key, value in (('beta1', beta1), ('beta2', beta2)):
    if not 0 <= value < 1:
        fail(f"--{key} must be in [0, 1), got {value}")
micro_batch_size = micro_batch_size or batch_size
if batch_size % micro_batch_size:
    fail(f"batch_size={batch_size} must be divisible by micro_batch_size={micro_batch_size}")
if iters < 10:
    fail(f"iters={iters}: the median needs at least 10 timed steps")
if rounds < 1 or iters % rounds:
    fail(f"rounds={rounds} must be >= 1 and divide iters={iters}")
grad_accum = batch_size // micro_batch_size
try:                                    # before the timing: a path that cannot be written fails now
    if json_out:
        output_file(json_out, 'json_out')
    if profile:
        output_folder(os.path.dirname(os.path.abspath(profile)), 'profile')
except ValueError as e:
    fail(e)


def model_config(name):
    """The GPTConfig of a timed variant: the shape's keys with variant=name (Hugging Face's model: standard's).
    Raises ValueError for an impossible shape."""
    cfg = {f.name: config[f.name] for f in GPTConfig.key_fields()}
    return GPTConfig.from_keys(**dict(cfg, variant='standard' if name == _HF else name))


def hf_llama():
    """Hugging Face's LlamaForCausalLM with the standard variant's shape: the same width, depth, heads, MLP width
    (4 n_embd, gated SiLU), RMSNorm eps, rotary embeddings, biases and an untied head; attention through
    PyTorch's scaled_dot_product_attention ('sdpa'), as ours. Its loss shifts its labels itself, so its step is
    given labels = inputs and predicts the same number of tokens less one."""
    c = model_config(_HF)
    hf_config = transformers.LlamaConfig(
        vocab_size=c.vocab_size, hidden_size=c.n_embd, intermediate_size=4 * c.n_embd, num_hidden_layers=c.n_layer,
        num_attention_heads=c.n_head, num_key_value_heads=c.n_head, max_position_embeddings=c.block_size,
        rms_norm_eps=1e-6, tie_word_embeddings=False, attention_bias=c.bias, mlp_bias=c.bias, hidden_act='silu')
    hf_config._attn_implementation = 'sdpa'
    return transformers.LlamaForCausalLM(hf_config)


if memory_check:
    try:
        estimates = {name: memory_estimate(model_config(name), micro_batch_size, T, dtype, device_type)
                     for name in names}
    except ValueError as e:
        fail(e)
    # one variant at a time (rounds=1), or every model and its optimizer at once plus one step's activations
    fixed = {name: p['weights'] + p['optimizer'] for name, (_, p) in estimates.items()}
    need = max(t for t, _ in estimates.values()) if rounds == 1 else \
        sum(fixed.values()) + max(t - fixed[name] for name, (t, _) in estimates.items())
    have = available_memory(device, device_type)
    if have is not None and need > have:
        worst = max(estimates, key=lambda n: estimates[n][0])
        parts = ', '.join(f"{k} {v / 2**30:.1f}" for k, v in estimates[worst][1].items())
        fail(f"this model and batch need about {need / 2**30:.1f} GiB ({worst}: {parts} GiB"
             f"{'' if rounds == 1 else f'; {len(names)} models at once'}) but {have / 2**30:.1f} GiB is available "
             f"on {device}: lower batch_size, micro_batch_size, block_size or the model (--memory_check=False "
             f"tries anyway)")

ptdtype = getattr(torch, dtype)
autocast = nullcontext() if dtype == 'float32' else torch.autocast(device_type, dtype=ptdtype)
allow_tf32()


def sync():
    if device_type == 'cuda':
        torch.cuda.synchronize()


def step_memory(run):
    """Bytes one model's training step holds at its peak, from one extra untimed step: its weights, buffers
    and optimizer state (counted from the tensors) plus the most the step adds on top of what was live when it
    began (a GPU's max_memory_allocated; a CPU's sampled resident set, after giving freed heap pages back to the
    OS, which malloc_trim does with kept memory too). Separable between the models of one run, unlike a CPU
    process's peak resident set. None on a CPU without /proc."""
    if device_type == 'cuda':
        sync()
        torch.cuda.reset_peak_memory_stats(device)
        start = torch.cuda.memory_allocated(device)
        run['step'](warmup + len(run['times']))
        sync()
        return run['state_bytes'] + torch.cuda.max_memory_allocated(device) - start
    if resident_bytes() is None:
        return None
    gc.collect()
    release_free_memory()
    with ResidentPeak() as rss:
        run['step'](warmup + len(run['times']))
    return run['state_bytes'] + rss.peak - rss.start


def profile_step(run, rows=20):
    """One extra untimed step of a model under torch.profiler: prints the `rows` ops with the most self time
    (CPU, or CUDA on a GPU) and writes the trace to <profile>_<variant>.json."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device_type == 'cuda':
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
        run['step'](warmup + len(run['times']))
        sync()
    path = f"{profile}_{run['variant']}.json"
    prof.export_chrome_trace(path)
    tqdm.write(f"  {run['variant']}: one step's {rows} costliest ops (trace: {path})")
    tqdm.write(prof.key_averages().table(sort_by=f"self_{'cuda' if device_type == 'cuda' else 'cpu'}_time_total",
                                         row_limit=rows))


def extra_steps(run):
    """After a model's timed steps: its peak memory (step_memory) and, with --profile=<folder>, its profile."""
    run['peak_memory'] = step_memory(run)
    bar.update()
    if profile:
        profile_step(run)
        bar.update()


def setup(name):
    """Model, optimizer, step function and per-step data for one variant; runs the untimed warm-up steps."""
    torch.manual_seed(seed)
    try:
        with torch.device('meta') if name == _HF else nullcontext():    # for Hugging Face's: the FLOP count only
            ours = GPT(model_config(name))
    except ValueError as e:
        fail(e)
    step_flops = flops_per_token(ours, T)              # Hugging Face's model: the same matmuls as standard
    raw = (hf_llama() if name == _HF else ours).to(device)
    params = [p for p in raw.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=learning_rate, betas=(beta1, beta2), weight_decay=weight_decay,
                                  fused=device_type == 'cuda') if name == _HF else \
        raw.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
    if optimizer_impl == 'foreach':     # the same groups and hyperparameters, stepped by the foreach kernels
        groups = [{k: v for k, v in g.items() if k not in ('fused', 'foreach')} for g in optimizer.param_groups]
        optimizer = torch.optim.AdamW(groups, foreach=True)
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == 'float16')
    model = raw if name == _HF else HeadLoss(raw, fused=fused_loss)    # train.py's loss
    ours_mode = dict(mode=compile_mode) if compile_mode and name != _HF else {}
    model = torch.compile(model, **ours_mode) if compile else model
    graphs = cudagraphs and name != _HF
    g = torch.Generator(device=device).manual_seed(seed)
    tokens = torch.randint(vocab_size, (2, batch_size, T + 1), device=device, generator=g)   # two batches, reused
    batches = [[(d[i:i + micro_batch_size, :-1], d[i:i + micro_batch_size, 1:])
                for i in range(0, batch_size, micro_batch_size)] for d in tokens]

    recompute = partitioner_settings() if name == _HF else \
        partitioner_settings(activation_memory_budget, recompute_pointwise)

    def step(it):
        if graphs:                      # a new step: the graphs' outputs of the last one may be overwritten
            torch.compiler.cudagraph_mark_step_begin()
        for x, y in batches[it % 2]:
            with autocast, torch._functorch.config.patch(**recompute):       # read as it compiles
                loss = model(input_ids=x, labels=x).loss if name == _HF else model(x, y)[1]
            scaler.scale(loss / grad_accum).backward()
        if grad_clip:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach().clone() if graphs else loss.detach()      # a copy outlives the next replay

    t0 = time.perf_counter()
    bar.set_description(f"{name} warm-up{' (compiles)' if compile else ''}")
    for it in range(warmup):
        step(it)
        bar.update()
    sync()
    n_trainable, n_total = sum(p.numel() for p in params), sum(p.numel() for p in raw.parameters())
    state = [*raw.parameters(), *raw.buffers(),
             *(v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v))]
    impl = 'fused' if optimizer.defaults['fused'] else 'foreach' if optimizer.defaults['foreach'] else 'for-loop'
    return dict(variant=name, step=step, times=[], cpu_times=[], losses=[], warmup_s=time.perf_counter() - t0,
                optimizer=impl, compile_mode=None if not compile else 'default' if name == _HF else ours_mode.get(
                    'mode', 'default'),
                flops_per_token=step_flops, trainable_params=n_trainable, params=n_total,
                state_bytes=sum(t.numel() * t.element_size() for t in state))


def time_steps(run, n):
    bar.set_description(run['variant'])
    for _ in range(n):
        sync()
        t0, c0 = time.perf_counter(), time.process_time()
        run['losses'].append(run['step'](warmup + len(run['times'])))
        sync()
        run['times'].append(time.perf_counter() - t0)
        run['cpu_times'].append(time.process_time() - c0)
        bar.update()


# ----------------------------------------------------------------------------- peak and runs
if by_default and small:
    print("note: off a GPU bench.py times a small shape by default; --shape=lm times paper 1's LM shape "
          "(12 x 512, T 1024: minutes on a CPU)", file=sys.stderr)
if peak_flops:
    peak_source = 'given'
elif device_type == 'cuda':
    peak_flops, peak_source = device_peak(device, device_type, dtype)
    peak_source += '' if peak_flops else ' (set --peak_flops=<FLOP/s>)'
else:                           # train.py's peak (the same measurement and cache); bf16 and fp32 both shown
    print("the CPU's matmul peak (measured once per machine, dtype and thread count, then cached) ...",
          file=sys.stderr, flush=True)
    cpu_peaks = {name: cpu_peak_flops(name, cpu_peak_n)
                 for name in dict.fromkeys(('bfloat16', 'float32', dtype))}
    peak_flops, peak_source = cpu_peaks[dtype]
    peak_source += (f"; bf16 {cpu_peaks['bfloat16'][0] / 1e12:.3f}, fp32 {cpu_peaks['float32'][0] / 1e12:.3f} TFLOP/s")
    cpu_peaks = {name: flops for name, (flops, _) in cpu_peaks.items()}
    if dtype == 'bfloat16' and cpu_peaks['float32'] > peak_flops:
        print(f"note: this CPU's bf16 matmul ({peak_flops / 1e12:.3f} TFLOP/s) is slower than its fp32 "
              f"({cpu_peaks['float32'] / 1e12:.3f}), so --dtype=float32 (or auto) will likely train faster here")

def time_data(task, n):
    """Milliseconds the task takes to draw one global batch on the host (Task.get_batch, as train.py does
    before each step): the median of n draws after an untimed one."""
    rng = np.random.default_rng(train_keys.get('seed', 1337))
    times = []
    for _ in range(n + 1):
        t0 = time.perf_counter()
        task.get_batch(batch_size, rng)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times[1:])


data_ms = time_data(data, data_iters) if data is not None and data_iters else None
tokens_per_iter = batch_size * T
load_start = os.getloadavg()   # 1, 5, 15-minute load averages: other processes on the machine
recompute_note = (f" (recompute pointwise {recompute_pointwise}, activation memory budget {activation_memory_budget}"
                  f"{', compiled loss softmax ' + str(fused_loss) if device_type == 'cuda' else ''})")
compile_note = f", mode {compile_mode or 'default'}" if compile else ''
print(f"{device} ({torch.get_num_threads()} threads) | {dtype} | compile {compile}{compile_note}"
      f"{recompute_note if compile else ''} | AdamW {optimizer_impl} | "
      f"shape {shape}: {config['n_layer']} layers, n_embd {config['n_embd']}, {config['n_head']} heads, "
      f"vocab {vocab_size}, T {T} | "
      f"batch {batch_size} = {micro_batch_size} x {grad_accum} accum | {tokens_per_iter:,} tokens/iter | "
      f"peak {peak_flops / 1e12:.2f} TFLOP/s ({peak_source}) | "
      f"load {load_start[0]:.2f}" + (" | malloc keeps freed memory" if kept else "") +
      (f" | data {data_ms:.1f} ms per batch on the host" if data_ms is not None else ""))
# on a terminal, a bar over every model's steps: warm-up, timed, the memory step and the profiled one
bar = tqdm(total=len(names) * (warmup + iters + 1 + bool(profile)), desc=names[0], unit='step', file=sys.stderr,
           disable=None, leave=False)
results = []
if rounds == 1:       # one variant at a time: only one model in memory
    for name in names:
        run = setup(name)
        time_steps(run, iters)
        extra_steps(run)
        results.append(run)
        del run['step']
        gc.collect()
        if compile:
            torch._dynamo.reset()
        tqdm.write(f"  {name}: warm-up {run['warmup_s']:.1f} s, median "
                   f"{1000 * statistics.median(run['times']):.1f} ms/iter")
else:
    results = [setup(name) for name in names]
    for r in range(rounds):
        for run in results:
            time_steps(run, iters // rounds)
    for run in results:
        extra_steps(run)
        del run['step']
bar.close()

base = next((r for r in results if r['variant'] == 'standard'), None)
for r in results:
    losses = torch.stack(r.pop('losses')).float().cpu()
    if not torch.isfinite(losses).all():
        fail(f"{r['variant']}: non-finite loss in the timed steps")
    r['loss'] = losses[-1].item()
    r['losses'] = losses.tolist()       # every timed step's, to set a compile mode's beside the eager step's
    r['ms_per_iter'] = 1000 * statistics.median(r['times'])
    r['ms_min'], r['ms_max'] = 1000 * min(r['times']), 1000 * max(r['times'])
    # CPU seconds the process got per wall second, over its threads: < 1 when other processes share the cores
    r['cpu_share'] = sum(r.pop('cpu_times')) / sum(r['times']) / torch.get_num_threads()
    r['tokens_per_s'] = tokens_per_iter / (r['ms_per_iter'] / 1000)
    r['flops_per_s'] = r['flops_per_token'] * r['tokens_per_s']
    r['mfu'] = r['flops_per_s'] / peak_flops if peak_flops else None
    if base is not None:
        r['speedup'] = r['tokens_per_s'] / base['tokens_per_s']
        r['predicted_speedup'] = base['flops_per_token'] / r['flops_per_token']
        gain = r['predicted_speedup'] - 1
        r['fraction_of_predicted_gain'] = (r['speedup'] - 1) / gain if abs(gain) > 1e-9 else None
    r['times'] = [round(1000 * t, 3) for t in r['times']]

# the process's peak: a GPU's largest allocation over the run, a CPU's largest resident set (every model's)
process_peak = torch.cuda.max_memory_allocated(device) if device_type == 'cuda' else \
    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024      # KiB on Linux
if json_out:
    setup_info = dict(device=device, device_name=torch.cuda.get_device_name(device) if device_type == 'cuda' else
                      'cpu', threads=torch.get_num_threads(), dtype=dtype, compile=compile, shape=shape,
                      compile_mode=(compile_mode or 'default') if compile else None, optimizer_impl=optimizer_impl,
                      recompute_pointwise=recompute_pointwise if compile else None,
                      fused_loss=fused_loss, rounds=rounds,
                      activation_memory_budget=activation_memory_budget if compile else None,
                      **{k: config[k] for k in ('n_layer', 'n_head', 'n_embd')}, vocab_size=vocab_size, T=T,
                      batch_size=batch_size, micro_batch_size=micro_batch_size, warmup=warmup, iters=iters,
                      peak_flops=peak_flops, peak_source=peak_source, malloc_keeps_freed_memory=kept, data_ms=data_ms,
                      load_avg_start=load_start, load_avg_end=os.getloadavg(), process_peak_memory=process_peak,
                      torch=torch.__version__, argv=sys.argv[1:])
    with open(json_out, 'w') as f:
        json.dump(dict(setup=setup_info, results=results), f, indent=1)

print(f"{'variant':<11} {'tok/s':>9} {'ms/iter':>9} {'min-max ms':>15} {'GFLOP/tok':>9} {'TFLOP/s':>8} {'MFU':>6} "
      f"{'peak mem':>9} {'cpu share':>9} {'speedup':>8} {'FLOP-pred':>9} "
      f"{'of gain':>7}")
for r in results:
    mfu = f"{100 * r['mfu']:.1f}%" if r['mfu'] is not None else '-'
    memory = f"{r['peak_memory'] / 2**30:>7.2f}Gi" if r['peak_memory'] is not None else f"{'-':>9}"
    cpu_share = f"{100 * r['cpu_share']:.0f}%" if device_type == 'cpu' else '-'
    sp = (f"{r['speedup']:.3f}x", f"{r['predicted_speedup']:.3f}x",
          f"{100 * r['fraction_of_predicted_gain']:.0f}%" if r['fraction_of_predicted_gain'] is not None else '-') \
        if base is not None else ('-', '-', '-')
    print(f"{r['variant']:<11} {r['tokens_per_s']:>9,.0f} {r['ms_per_iter']:>9.1f} "
          f"{r['ms_min']:>7.0f}-{r['ms_max']:<7.0f} {r['flops_per_token'] / 1e9:>9.4f} {r['flops_per_s'] / 1e12:>8.3f} "
          f"{mfu:>6} {memory} {cpu_share:>9} {sp[0]:>8} {sp[1]:>9} {sp[2]:>7}")
print(f"peak mem: one model's step (weights, buffers, optimizer state and what the step adds; bench.step_memory); "
      f"the process's peak {'allocation' if device_type == 'cuda' else 'resident set'}: {process_peak / 2**30:.2f} GiB")
hf = next((r for r in results if r['variant'] == _HF), None)
if hf is not None:
    for r in results:
        if r is not hf:
            print(f"{r['variant']} / {_HF}: {r['tokens_per_s'] / hf['tokens_per_s']:.3f}x the tokens/s"
                  + (f", {r['peak_memory'] / hf['peak_memory']:.2f}x the peak memory"
                     if r['peak_memory'] and hf['peak_memory'] else ''))
print(f"load average (1/5/15 min) at start {' '.join(f'{x:.2f}' for x in load_start)}, at end "
      f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
