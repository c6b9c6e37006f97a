"""
One training loop for every task and variant, nanoGPT style: a single process on cpu / cuda / mps, or DDP
under torchrun (nccl on CUDA, gloo on CPU).

    python train.py config/cpu/retrieval_standard.py
    python train.py config/cpu/dyck1_mixit.py --max_iters=500 --device=cpu
    python train.py config/cpu/dyck1_mixit.py --init_from=resume --max_iters=3000   # continue out_dir's run
    torchrun --standalone --nproc_per_node=8 train.py config/fineweb_mixit.py
    python train.py config/cpu/universal_dyck1.py --construction=sparse    # paper 2: only E and U train
    python train.py --help                                                 # every key, its default and comment

The global batch (`batch_size` sequences per optimizer step) is fixed: each rank takes its slice of the
same sampled batch and accumulates micro-batches of `micro_batch_size`, so the number of processes changes
only the time. On a GPU a forked worker process draws the next batches while the device trains (`prefetch`):
the same batches, and a resumed run draws the one that came next.

A run writes out_dir/log.jsonl (one record per evaluation), out_dir/train_log.jsonl (one per log interval),
out_dir/ckpt.pt (all that resuming needs: every checkpoint_interval iterations and always at the end) and
out_dir/ckpt_best.pt (weights, model_args and config at the evaluation with the lowest val_loss so far). These
two replace the former always_save_checkpoint: True is checkpoint_interval=eval_interval (the default), False
is ckpt_best.pt. A new run refuses an out_dir that holds a run unless overwrite=True (which deletes its logs
and checkpoints); --init_from=resume continues it: the model and task keys come from the checkpoint (one
given that contradicts it is an error), and the logs are cut back to the checkpoint's iteration, so every
iteration appears once. docs/runs.md has the details.
"""

import inspect
import json
import math
import os
import signal
import sys
import time
from contextlib import nullcontext
from dataclasses import fields
from functools import partial

import numpy as np
import torch
import torch._functorch.config
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm

import universal
from tasks import crop_unscored
from common import (allow_tf32, available_memory, frozen_fingerprint, frozen_mismatch, keep_freed_memory,
                    load_checkpoint, load_weights, lock_dir, make_task, memory_estimate,
                    model_args as make_model_args, partitioner_settings, peak_flops, resolve_device, resolve_dtype)
from configurator import configure, declare, fail
from model import GPT, GPTConfig

# ----------------------------------------------------------------------------- I/O
out_dir = 'out'
eval_interval = 250             # iterations between evaluations (log.jsonl; ckpt_best.pt when val_loss improves)
log_interval = 10               # iterations between training-loss records (train_log.jsonl)
checkpoint_interval: int | None = None   # iterations between writes of ckpt.pt; None: eval_interval; 0: only
                                         # at the end (it is always written at the end)
checkpoint_frozen = True        # ckpt.pt holds the frozen weights too; False: only the trained ones and a hash of
                                # each frozen one, which a resumed run rebuilds from the config and checks
eval_iters = 10                 # micro-batches for the training-loss estimate
eval_batch_size = 0             # 0: micro_batch_size if set, else batch_size
init_from = 'scratch'           # 'scratch' | 'resume' (out_dir/ckpt.pt) | a weights file: a state_dict, a
                                # ckpt.pt or a ckpt_best.pt (its weights only)
overwrite = False               # a new run replaces the run in out_dir (deletes its logs and checkpoints)
seed = 1337
wandb_log = False               # log evaluations and training losses to Weights & Biases (pip install wandb)
wandb_project = 'learned-transformer'
wandb_run_name = ''             # '' -> out_dir's name
# ----------------------------------------------------------------------------- task (tasks.py)
task = 'retrieval'
task_seed = 0                   # seeds the test set and any fixed training set
fixed_train = False             # train on a fixed set of the paper's size instead of fresh samples each step
train_order = 'replacement'     # a fixed training set's batches: 'replacement' draws each example independently;
                                # 'epochs' goes through shuffled epochs of it (the authors' Trainer; Task.epoch_batch)
train_on_test = False           # fresh samples may repeat test examples, as the authors' streams (Dyck-1 configs)
n_train = 0                     # 0: the paper's size
n_test = 0                      # 0: the paper's size
retrieval_vocab_size = 256
retrieval_m_max = 30
khop_k = -1                     # -1: k ~ U{0..khop_max_k} per example (paper 1); 1..4 fixed (paper 2)
khop_max_k = 16
khop_length = 98               # input characters per sequence (paper 1: 98)
dyck1_min_len = 40
dyck1_max_len = 40              # the longest string (characters)
dyck1_format = 'query'          # 'query': the string, then ? and the answer (authors'); 'last': label at the last char
dyck1_batched = False           # query format: draw a batch's strings together (same distribution, faster)
modular_addition_p = 599
modular_addition_all_pairs = False
modular_addition_format = 'equals'  # 'pair': `a b c`, the sum predicted at b's position (authors' layout)
decimal_addition_n_digits = 10
memorization_n_keys = 512
lm_data_dir = 'data/wikitext103'  # made by: python tasks.py prepare wikitext103 (or prepare <name> --input=files)
lm_block_size = 256             # training windows and non-overlapping test windows
lm_compact_vocab = False        # relabel the ids that occur to 0..K-1: a K-way output layer (CPU runs)
sentiment_data_dir = 'data/yelp'
sentiment_block_size = 256      # texts truncated / padded to this; the label is the target at the last token
sentiment_compact_vocab = False
sentiment_padding = 'left'      # 'left': every text ends at the last position; 'right': starts at position 0
sentiment_label = 'token'       # 'class': an n-class head on the last text token (the authors' classifier);
                                # 'token': the label's token id through the vocabulary-wide head
sentiment_bos = False           # <|endoftext|> at position 0, pads a token of their own (the authors' BOS)
# ----------------------------------------------------------------------------- model (model.py)
declare(globals(), GPTConfig, n_layer=2, n_head=4, n_embd=128)   # every GPTConfig field is a key (--help)
block_size = 0                  # 0: the task's sequence length
construction = ''               # paper 2: '' | 'sparse' | 'looped': the fixed attention weights written at init
# ----------------------------------------------------------------------------- optimizer
batch_size = 256                # global batch, sequences per optimizer step
micro_batch_size = 0            # sequences per forward pass and rank; 0: batch_size // world_size
max_iters = 5000
learning_rate = 1e-3
weight_decay = 0.1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0                 # 0: off
warmup_iters = 100
lr_decay_iters = 0              # 0: max_iters
lr_schedule = 'cosine'          # after warm-up: 'cosine' | 'linear' decay to learning_rate * min_lr_ratio
min_lr_ratio = 0.1              # the decay ends at learning_rate * min_lr_ratio
# ----------------------------------------------------------------------------- system
device = 'auto'                 # auto | cpu | cuda | cuda:N | mps
ddp_backend = ''                # under torchrun: '' -> nccl on CUDA, gloo on a CPU; gloo on CUDA lets several
                                # processes share one GPU (a test of the multi-process logic, not of speed)
dtype = 'auto'                  # auto | bfloat16 | float16 | float32 | float64 (auto on a CPU: its faster
                                # matmul; float64: the whole model in double precision, a rounding check)
compile = True                  # torch.compile the model
recompute_pointwise = True      # compiled: the backward recomputes pointwise ops (norms, rotary, SiLU) rather
                                # than keep their outputs, never a matmul or attention (common.partitioner_settings)
activation_memory_budget = 1.0  # compiled: below 1, keep only this fraction of the activations, recomputing the
                                # cheapest ops, matmuls included; 0 keeps only the graph's inputs (docs/performance.md)
memory_check = True             # refuse a model + micro-batch whose estimated memory (common.memory_estimate)
                                # exceeds what the device has free, before building it
cpu_keep_memory = False         # CPU: malloc keeps freed memory for the next step (common.keep_freed_memory;
                                # faster large steps, but the process keeps its peak: see its docstring)
prefetch: int | None = None     # batches a worker process draws ahead of the loop (the same batches; resuming stays
                                # exact); 0: the loop draws each itself; None: 2 on a GPU, else 0
# -----------------------------------------------------------------------------
cli_given = {}                  # {key: 'flag' or its config file} for every key the command line sets
config = configure(globals(), given=cli_given)


# ----------------------------------------------------------------------------- flags, before any work
def check_flags():
    """fail() naming the first flag out of range."""
    positive = dict(batch_size=batch_size, eval_interval=eval_interval, log_interval=log_interval,
                    eval_iters=eval_iters)
    for key, value in positive.items():
        if value < 1:
            fail(f"--{key} must be >= 1, got {value}")
    non_negative = dict(max_iters=max_iters, micro_batch_size=micro_batch_size, eval_batch_size=eval_batch_size,
                        n_train=n_train, n_test=n_test, warmup_iters=warmup_iters, lr_decay_iters=lr_decay_iters,
                        weight_decay=weight_decay, grad_clip=grad_clip, seed=seed, task_seed=task_seed,
                        checkpoint_interval=checkpoint_interval or 0, prefetch=prefetch or 0)
    for key, value in non_negative.items():
        if value < 0:
            fail(f"--{key} must be >= 0, got {value}")
    if not learning_rate > 0:
        fail(f"--learning_rate must be > 0, got {learning_rate}")
    if not 0 <= activation_memory_budget <= 1:
        fail(f"--activation_memory_budget must be in [0, 1], got {activation_memory_budget}")
    if not 0 <= min_lr_ratio <= 1:
        fail(f"--min_lr_ratio must be in [0, 1], got {min_lr_ratio}")
    if lr_schedule not in ('cosine', 'linear'):
        fail(f"--lr_schedule must be 'cosine' or 'linear', got {lr_schedule!r}")
    if train_order not in ('replacement', 'epochs'):
        fail(f"--train_order must be 'replacement' or 'epochs', got {train_order!r}")
    if ddp_backend not in ('', 'nccl', 'gloo'):
        fail(f"--ddp_backend must be '', 'nccl' or 'gloo', got {ddp_backend!r}")
    for key, value in dict(beta1=beta1, beta2=beta2).items():
        if not 0 <= value < 1:
            fail(f"--{key} must be in [0, 1), got {value}")
    if construction not in ('', 'sparse', 'looped'):
        fail(f"--construction must be '', 'sparse' or 'looped', got {construction!r}")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        fail(f"--out_dir={out_dir} is a file, not a folder")
    if init_from == 'resume' and overwrite:
        fail("--overwrite=True starts a new run; it cannot go with --init_from=resume")
    if init_from not in ('scratch', 'resume') and not os.path.isfile(init_from):
        fail(f"--init_from must be 'scratch', 'resume' or a weights file; {init_from} "
             f"{'is a folder' if os.path.isdir(init_from) else 'does not exist'}")


check_flags()

# ----------------------------------------------------------------------------- out_dir: a new run or a resumed one
RUN_FILES = ('ckpt.pt', 'ckpt_best.pt', 'log.jsonl', 'train_log.jsonl')   # what makes out_dir hold a run
ckpt_path, best_path = os.path.join(out_dir, 'ckpt.pt'), os.path.join(out_dir, 'ckpt_best.pt')
MODEL_KEYS = [f.name for f in fields(GPTConfig)] + ['construction']
TASK_KEYS = ['task', 'task_seed', 'fixed_train', 'train_on_test', 'n_train', 'n_test']


def run_keys(cfg):
    """The keys of a config that fix its run's task and model ('task' first): TASK_KEYS, the `<task>_*` keys
    of its task, every GPTConfig field (block_size included) and construction. A resumed run may not change
    them; every other key (schedule, intervals, batch and its split, device, dtype, ...) may change."""
    prefix = f"{cfg.get('task')}_"
    return TASK_KEYS + [k for k in cfg if k.startswith(prefix)] + MODEL_KEYS


def shown(value):
    return ','.join(map(str, value)) if isinstance(value, tuple) else str(value)


def adopt_checkpoint_config(saved):
    """A resumed run continues its checkpoint's config: every key that the command line (config files and
    flags) leaves alone takes the checkpoint's value, except init_from, out_dir and overwrite. fail() on the
    first run key (run_keys) given a value that differs from the checkpoint's."""
    given, fixed = cli_given, run_keys(saved)
    for key in [k for k in fixed if k in given] + [k for k in saved if k not in given]:
        if key not in saved or key not in config or key in ('init_from', 'out_dir', 'overwrite'):
            continue                                  # a key of an older or newer train.py: nothing to compare
        if key in given and config[key] != saved[key]:
            source = f"--{key}={shown(config[key])}" if given[key] == 'flag' else \
                f"{key}={shown(config[key])} (in {given[key]})"
            fail(f"{source} contradicts the checkpoint in {out_dir} ({key}={shown(saved[key])})")
        config[key] = globals()[key] = saved[key]


iter_num, best_val_loss, checkpoint = 0, float('inf'), None
if init_from == 'resume':
    if not os.path.isfile(ckpt_path):
        logs = [n for n in RUN_FILES[2:] if os.path.isfile(os.path.join(out_dir, n))]
        fail(f"init_from='resume' but there is no checkpoint at {ckpt_path}" +
             (f" (only {', '.join(logs)}: start again with --overwrite=True)" if logs else ''))
    try:
        checkpoint = load_checkpoint(ckpt_path, keys=('model', 'model_args', 'optimizer', 'scaler', 'iter_num',
                                                      'best_val_loss', 'config', 'data_rng', 'torch_rng'),
                                     trained_only=True)
    except ValueError as e:
        fail(e)
    adopt_checkpoint_config(checkpoint['config'])
    iter_num, best_val_loss = checkpoint['iter_num'], checkpoint['best_val_loss']
    if max_iters < iter_num:
        fail(f"--max_iters={max_iters} is before the checkpoint in {out_dir} (iteration {iter_num})")
elif os.path.isdir(out_dir) and not overwrite:
    held = [n for n in RUN_FILES if os.path.exists(os.path.join(out_dir, n))]
    if held:
        fail(f"{out_dir} holds a run ({', '.join(held)}): continue it with --init_from=resume, or replace it "
             f"with --overwrite=True")
if checkpoint_interval is None:
    checkpoint_interval = eval_interval

# ----------------------------------------------------------------------------- processes and devices
ddp = int(os.environ.get('RANK', -1)) != -1
try:
    device, device_type = resolve_device(device)
except ValueError as e:
    fail(e)
if ddp:
    rank, local_rank, world_size = (int(os.environ[k]) for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE'))
    if batch_size % world_size:
        fail(f"--batch_size={batch_size} must be divisible by the number of processes ({world_size})")
    backend = ddp_backend or ('nccl' if device_type == 'cuda' else 'gloo')
    if device_type == 'cuda':
        if backend == 'nccl' and local_rank >= torch.cuda.device_count():
            fail(f"local rank {local_rank} has no GPU of its own ({torch.cuda.device_count()} here): NCCL needs one "
                 f"per process (--ddp_backend=gloo shares them, to test the multi-process logic)")
        device = f'cuda:{local_rank % torch.cuda.device_count()}'
        torch.cuda.set_device(device)
    dist.init_process_group(backend=backend,       # with device_id, NCCL binds the rank's GPU
                            device_id=torch.device(device) if backend == 'nccl' else None)
else:
    rank, local_rank, world_size = 0, 0, 1
master = rank == 0
if device_type == 'cpu' and cpu_keep_memory and not keep_freed_memory():
    print("note: cpu_keep_memory needs glibc's malloc; ignored here", file=sys.stderr)
try:
    dtype, dtype_note = resolve_dtype(dtype, device_type, float64=True)
except ValueError as e:
    fail(e)
if ddp and dtype_note:                           # a CPU's measured choice: every rank trains in rank 0's
    choice = [dtype]
    dist.broadcast_object_list(choice, src=0)
    dtype = choice[0]
ptdtype = getattr(torch, dtype)
autocast = nullcontext() if dtype in ('float32', 'float64') else torch.autocast(device_type, dtype=ptdtype)
allow_tf32()
torch.manual_seed(seed)

rank_batch = batch_size // world_size
eval_batch_size = eval_batch_size or micro_batch_size or batch_size   # the same for any number of processes
micro_batch_size = micro_batch_size or rank_batch
if rank_batch % micro_batch_size:
    fail(f"per-process batch {rank_batch} must be divisible by micro_batch_size={micro_batch_size}")
grad_accum = rank_batch // micro_batch_size

# ----------------------------------------------------------------------------- task and model
if wandb_log and master:
    try:
        import wandb
    except ImportError:
        fail("wandb_log=True needs the wandb package: pip install wandb")
try:
    data = make_task(config)
    model_args = make_model_args(config, data)
except ValueError as e:
    fail(e)
T = data.block_size
if train_order == 'epochs' and data.fixed_rows() is None:
    fail(f"--train_order=epochs needs a fixed training set, and {task} samples fresh examples (--fixed_train=True "
         f"fixes one for the synthetic tasks)")

if checkpoint is not None:
    for key, value in checkpoint['model_args'].items():   # the same keys give the same shape, unless the data
        if key in model_args and model_args[key] != value:  # changed (a vocabulary, a sequence length)
            fail(f"{out_dir}: the task now gives {key}={model_args[key]} but the checkpoint has "
                 f"{key}={value} (has its data changed?)")
    model_args = checkpoint['model_args']
try:
    gpt_config = GPTConfig(**model_args)
    if master:                                    # one run per out_dir (under DDP rank 0 writes it)
        lock_dir(out_dir)
    if memory_check:                              # before any weight is allocated
        need, parts = memory_estimate(gpt_config, micro_batch_size, T, dtype, device_type)
        need *= int(os.environ.get('LOCAL_WORLD_SIZE', 1)) if device_type == 'cpu' else 1   # processes share RAM
        have = available_memory(device, device_type)
        if have is not None and need > have:
            fail(f"this model and micro-batch need about {need / 2**30:.1f} GiB ("
                 f"{', '.join(f'{k} {v / 2**30:.1f}' for k, v in parts.items())} GiB per process) but "
                 f"{have / 2**30:.1f} GiB is available on {device}: lower --micro_batch_size (now "
                 f"{micro_batch_size}; the global batch stays {batch_size}), or the model (--memory_check=False "
                 f"tries anyway)")
    raw_model = GPT(gpt_config)
    frozen = checkpoint.get('frozen') if checkpoint is not None else None   # a ckpt.pt of the trained weights
    if construction and (checkpoint is None or frozen is not None):   # paper 2: R_Q, R_K, R_V of a construction;
        universal.write_construction(raw_model, construction)         # E, U stay random
except ValueError as e:
    fail(e)
try:
    if checkpoint is not None:
        load_weights(raw_model, checkpoint['model'], ckpt_path, without=frozen or ())
    elif init_from != 'scratch':
        weights = load_checkpoint(init_from, keys=())
        if isinstance(weights, dict) and isinstance(weights.get('model'), dict):   # a ckpt.pt or ckpt_best.pt
            weights = weights['model']
        load_weights(raw_model, weights, init_from)
except ValueError as e:
    fail(e)
raw_model.to(device, dtype=torch.float64) if dtype == 'float64' else raw_model.to(device)
if dtype in ('bfloat16', 'float16'):      # MixiT's static matrices kept in the dtype autocast multiplies in
    raw_model.mixing_in(ptdtype)
if frozen is not None:                    # the frozen weights, drawn again from the seed, must be the run's
    differ = frozen_mismatch(frozen, raw_model)
    if differ:
        fail(f"{ckpt_path} holds only the trained weights, and the frozen ones rebuilt from its config differ "
             f"from the run's ({differ[0]}{f' and {len(differ) - 1} more' if len(differ) > 1 else ''}): "
             f"another torch version or construction? Start again with --overwrite=True")

optimizer = raw_model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
scaler = torch.amp.GradScaler(device_type, enabled=dtype == 'float16')
data_rng = np.random.default_rng(seed)   # the same stream on every rank: each takes its slice of the batch
data_start = 0                           # train_order='epochs': the training examples gone through so far
if checkpoint is not None:
    try:
        optimizer.load_state_dict(checkpoint['optimizer'])
        scaler.load_state_dict(checkpoint['scaler'])
        data_rng.bit_generator.state = checkpoint['data_rng']
        data_start = checkpoint.get('data_start', 0)
        torch.set_rng_state(checkpoint['torch_rng'])
    except (ValueError, KeyError, TypeError, RuntimeError) as e:
        fail(f"{ckpt_path}: its optimizer or random state does not fit this run ({type(e).__name__}: "
             f"{(str(e).splitlines() or [''])[0][:100]})")
    checkpoint = None                                    # free memory
data_state = data_rng.bit_generator.state, data_start   # after the batches trained on so far: what ckpt.pt keeps
forks = 'fork' in torch.multiprocessing.get_all_start_methods()   # a prefetching worker is forked (batches())
if prefetch and not forks:
    fail(f"--prefetch={prefetch} needs processes started by fork, which this platform lacks; use --prefetch=0")
prefetch = (2 if device_type == 'cuda' and forks else 0) if prefetch is None else prefetch

for key, value in partitioner_settings(activation_memory_budget, recompute_pointwise).items():
    setattr(torch._functorch.config, key, value)                                 # read when a graph compiles
# static shapes: each batch shape compiles a graph of its own (the LM configs evaluate in batches of the training
# micro-batch's size), rather than a second shape turning every later graph symbolic in the batch
raw_model.fused_loss = compile and device_type == 'cuda'   # the head's softmax in two compiled passes per chunk
model = torch.compile(raw_model, dynamic=False) if compile else raw_model   # raw_model: the un-prefixed state_dict
eval_model = model
if ddp:  # MixiT's static matrices are identical on every rank: no need to broadcast buffers each step
    no_sync = 'forward_sync_buffers' in inspect.signature(DDP.__init__).parameters    # its name in newer torch
    model = DDP(model, device_ids=[torch.device(device).index] if device_type == 'cuda' else None,
                **{'forward_sync_buffers' if no_sync else 'broadcast_buffers': False})


def to_device(a):
    t = torch.from_numpy(np.ascontiguousarray(a))
    if device_type == 'cuda':
        return t.pin_memory().to(device, non_blocking=True)
    return t.to(device)


# right-padded batches (sentiment, retrieval, Dyck) drop their trailing unscored columns, which the outputs of a
# causal model at scored positions do not depend on; a non-causal model sees every column. Compiled with static
# shapes, the lengths are rounded up to a multiple of 64: a graph for each of a few lengths, not one per text length
# (torch._dynamo stops compiling after 8 and runs the rest eagerly)
crop = partial(crop_unscored, multiple=64 if compile else 1) if model_args['causal'] else (lambda x, y: (x, y))


def draw_batch(rng, start):
    """This rank's share of one global training batch, as grad_accum (x, y, weight) micro-batches on the host:
    drawn with rng, or with train_order='epochs' examples start .. start + batch_size - 1 of the epochs' stream.
    weight = world_size * (scored tokens in the micro-batch) / (scored tokens in the global batch): scaling each
    micro-batch's mean loss by it makes the gradient (after DDP's average over ranks) that of the mean loss
    over the whole global batch, however it is split into processes and micro-batches."""
    mine = slice(rank * rank_batch, (rank + 1) * rank_batch)
    if data.sample_rows is not None:    # every target scored (lm): this rank reads only its rows of the batch
        x, y = data.get_batch(batch_size, rng, rows=mine)
        n_scored = batch_size * y.shape[1]
    else:
        x, y = crop(*(data.epoch_batch(batch_size, start, seed) if train_order == 'epochs' else
                      data.get_batch(batch_size, rng)))
        n_scored = max(int((y >= 0).sum()), 1)
        x, y = x[mine], y[mine]
    return [(x[i:i + micro_batch_size], y[i:i + micro_batch_size],
             world_size * int((y[i:i + micro_batch_size] >= 0).sum()) / n_scored)
            for i in range(0, rank_batch, micro_batch_size)]


def leave_process_group(worker_id):
    """A prefetching worker leaves the run's process group, so that a Ctrl-C or a scheduler's SIGTERM to the group
    reaches the loop alone, which stops after its step; the worker is ended with the loop's process."""
    os.setpgid(0, 0)


class BatchStream(torch.utils.data.IterableDataset):
    """draw_batch again and again from the data state `state`, (the data RNG's state, the examples gone through),
    in the loop or in a DataLoader worker: each batch with the state after it, which ckpt.pt keeps, so that a
    resumed run draws the batch that came next."""

    def __init__(self, state):
        self.state = state

    def __iter__(self):
        rng, start = np.random.default_rng(), self.state[1]
        rng.bit_generator.state = self.state[0]
        while True:
            batch = draw_batch(rng, start)
            start += batch_size
            yield batch, (rng.bit_generator.state, start)


def batches(state):
    """The training batches from the data state `state` on (BatchStream), each with the state after it: drawn by
    the loop, or with prefetch > 0 by one forked worker process (train.py is a script: a spawned one would run it
    again) that keeps `prefetch` batches ready while the device trains on the last."""
    stream = BatchStream(state)
    if not prefetch:
        return iter(stream)
    return iter(torch.utils.data.DataLoader(stream, batch_size=None, num_workers=1, prefetch_factor=prefetch,
                                            collate_fn=lambda b: b, multiprocessing_context='fork',
                                            worker_init_fn=leave_process_group))


def all_reduce_sum(values):
    t = torch.tensor(values, dtype=torch.float64, device=device)
    if ddp:
        dist.all_reduce(t)
    return t.tolist()


@torch.no_grad()
def evaluate():
    """Loss (nats per scored token) and the task's metrics on its whole evaluation set, sharded across
    ranks and summed; plus a training-loss estimate from eval_iters fresh batches of a separate RNG, so
    evaluating never changes the training stream."""
    eval_model.eval()
    x_all, y_all = data.eval_set()
    lo, hi = rank * len(x_all) // world_size, (rank + 1) * len(x_all) // world_size
    loss_sum, counts = 0.0, {}
    for i in range(lo, hi, eval_batch_size):
        x, y = map(to_device, crop(x_all[i:min(i + eval_batch_size, hi)], y_all[i:min(i + eval_batch_size, hi)]))
        with autocast:
            logits, loss = eval_model(x, y, scored_only=True)  # (n_scored, V): the head only where y >= 0
        scored = y >= 0
        if len(logits):                                        # loss: the mean over this batch's scored tokens
            loss_sum += loss.item() * len(logits)
        pred = torch.full_like(y, -1).masked_scatter_(scored, logits.argmax(-1))
        for name, (num, den) in data.score(pred.cpu().numpy(), y.cpu().numpy()).items():
            counts[name] = (counts.get(name, (0, 0))[0] + num, counts.get(name, (0, 0))[1] + den)
    names = sorted(counts) if counts else sorted(data.score(y_all[:1], y_all[:1]))
    n_scored = int((y_all >= 0).sum())
    totals = all_reduce_sum([loss_sum] + [v for n in names for v in counts.get(n, (0, 0))])
    metrics = {'val_loss': totals[0] / max(n_scored, 1)}
    for j, n in enumerate(names):
        metrics[f'val_{n}'] = totals[1 + 2 * j] / max(totals[2 + 2 * j], 1)
    rng = np.random.default_rng([seed, iter_num, 1])
    train_loss = 0.0
    for i in range(eval_iters):                     # every rank draws every batch, and scores its share
        x, y = crop(*data.get_batch(eval_batch_size, rng))
        if i % world_size == rank:
            x, y = to_device(x), to_device(y)
            with autocast:
                _, loss = eval_model(x, y, scored_only=True)
            train_loss += loss.item() / eval_iters
    metrics['train_loss'] = all_reduce_sum([train_loss])[0]
    eval_model.train()
    return metrics


def get_lr(it):
    """Linear warmup, then a cosine (lr_schedule='cosine') or linear ('linear': the authors' classifier, with
    min_lr_ratio=0) decay to learning_rate * min_lr_ratio at lr_decay_iters."""
    decay_iters = lr_decay_iters or max_iters
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it >= decay_iters:
        return learning_rate * min_lr_ratio
    progress = (it - warmup_iters) / max(1, decay_iters - warmup_iters)
    left = 1 - progress if lr_schedule == 'linear' else 0.5 * (1 + math.cos(math.pi * progress))
    return learning_rate * (min_lr_ratio + (1 - min_lr_ratio) * left)


def write_atomically(path, write):
    """write(f) into path + '.tmp', fsync, rename onto path, fsync the folder: a kill at any moment leaves
    either the old file or the new one, never a partial one. A failed write (a full disk, a folder made
    read-only) removes the .tmp, keeps the old file and fail()s naming the path and the error."""
    tmp = path + '.tmp'
    try:
        with open(tmp, 'wb') as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(out_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except (OSError, RuntimeError) as e:     # torch.save reports a short write as RuntimeError
        if os.path.exists(tmp):
            os.remove(tmp)
        fail(f"cannot write {path}: {write_error(e)}; {os.path.basename(path)} is as before")


def write_error(e):
    """What went wrong in a failed write, in words: the errno's name and text, or torch's one line."""
    import errno
    if isinstance(e, OSError) and e.errno:
        return f"{errno.errorcode.get(e.errno, e.errno)} ({e.strerror})"
    return str(e).strip().splitlines()[-1][:200] + ' (a full disk?)'


def save_checkpoint():
    """out_dir/ckpt.pt: everything a resumed run needs. Weights come from the uncompiled, unwrapped model (no
    '_orig_mod.' prefix); with checkpoint_frozen=False only the trained ones, and under 'frozen' the others'
    fingerprint (a model whose weights are mostly frozen, paper 2's or the random transformer, then fits in a
    few MB)."""
    weights = raw_model.state_dict()
    state = dict(optimizer=optimizer.state_dict(), scaler=scaler.state_dict(), model_args=model_args,
                 iter_num=iter_num, best_val_loss=best_val_loss, config=config, data_rng=data_state[0],
                 data_start=data_state[1], torch_rng=torch.get_rng_state())
    hashes = {} if checkpoint_frozen else frozen_fingerprint(raw_model)   # {}: nothing is frozen, keep all
    if hashes:
        state.update(model={k: v for k, v in weights.items() if k not in hashes}, frozen=hashes)
    else:
        state.update(model=weights)
    write_atomically(ckpt_path, lambda f: torch.save(state, f))


def save_best(val_loss):
    """out_dir/ckpt_best.pt: the weights at the evaluation with the lowest val_loss so far, with model_args
    and config (sample.py --checkpoint=ckpt_best.pt, or --init_from=out_dir/ckpt_best.pt)."""
    state = dict(model=raw_model.state_dict(), model_args=model_args, config=config, iter_num=iter_num,
                 val_loss=val_loss)
    write_atomically(best_path, lambda f: torch.save(state, f))


def append_jsonl(name, record):
    path = os.path.join(out_dir, name)
    try:
        with open(path, 'a') as f:
            f.write(json.dumps(record) + '\n')
    except OSError as e:
        fail(f"cannot write {path}: {write_error(e)}")


def cut_log(name, last_iter):
    """Keep only the records of out_dir/name with iter <= last_iter (and drop a line cut short by a kill, and
    the record of a stop by a signal), so that a resumed run's records follow its checkpoint's without repeating
    an iteration."""
    path = os.path.join(out_dir, name)
    if not os.path.isfile(path):
        return
    kept = []
    with open(path) as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if (isinstance(record, dict) and isinstance(record.get('iter'), int) and record['iter'] <= last_iter
                    and 'stopped' not in record):      # a run that was stopped and goes on
                kept.append(line if line.endswith('\n') else line + '\n')
    write_atomically(path, lambda f: f.write(''.join(kept).encode()))


# ----------------------------------------------------------------------------- training loop
n_trainable, n_total = raw_model.num_params()
evaluates = lambda it: it % eval_interval == 0 or it == max_iters
# MFU on the log line: model FLOPs / (processes x device peak), the output layer at the evaluation set's share of
# scored tokens
flops_per_token = raw_model.flops_per_token(T, scored=float((data.eval_set()[1] >= 0).mean()))
peak, peak_source = peak_flops(device, device_type, dtype)
if master:
    if init_from == 'resume':     # the loop evaluates again at iter_num when due: its record is written anew
        cut_log('log.jsonl', iter_num - 1 if evaluates(iter_num) else iter_num)
        cut_log('train_log.jsonl', iter_num)
    else:                         # a new run (out_dir holds none, or overwrite=True): nothing of an old one stays
        for name in RUN_FILES + tuple(n + '.tmp' for n in RUN_FILES):
            if os.path.isfile(os.path.join(out_dir, name)):
                os.remove(os.path.join(out_dir, name))
    print(f"task {task} | variant {model_args['variant']} | {n_trainable:,} trainable of {n_total:,} parameters | "
          f"{world_size} process(es) on {device}, {dtype}{dtype_note} | global batch {batch_size} = "
          f"{micro_batch_size} x {grad_accum} accum x {world_size} ranks | {batch_size * T:,} tokens/iter" +
          (f" | resumed at iteration {iter_num}" if init_from == 'resume' else '') +
          (f" | MFU against {peak / 1e12:.3g} TFLOP/s ({peak_source})" if peak else ''))
    if wandb_log:
        wandb.init(project=wandb_project, name=wandb_run_name or os.path.basename(os.path.abspath(out_dir)),
                   config=config)
tokens_per_iter = batch_size * T
saved_iter = iter_num if init_from == 'resume' else -1     # the iteration ckpt.pt holds
pbar = tqdm(total=max_iters, initial=iter_num, disable=None if master else True, dynamic_ncols=True, leave=False)
# the training loss logged every log_interval iterations averages the steps since the last record (or the
# resumption): its sum is kept on the device, so that logging is the only host-device synchronisation (under
# DDP the ranks also agree after each step on whether a signal asked them to stop)
loss_accum = torch.zeros((), device=device, dtype=torch.float64 if dtype == 'float64' else torch.float32)
t_log, iters_since_log = time.perf_counter(), 0
stop_signal = 0                 # the signal that asked the run to stop (SIGINT, SIGTERM), 0 while none has
peak_doubted = False            # a note was printed that the cached CPU peak is below the achieved rate


def request_stop(signum, frame):
    """SIGINT / SIGTERM (Ctrl-C, a scheduler's preemption): the run saves ckpt.pt after the step under way and
    exits 128 + signum; a second signal exits at once."""
    global stop_signal
    if stop_signal:
        os._exit(128 + signum)
    stop_signal = signum
    print(f"{signal.Signals(signum).name}: stopping after this step, with ckpt.pt saved (again: exit at once)",
          file=sys.stderr, flush=True)


stream = batches(data_state)    # a prefetching worker starts drawing now, while the model evaluates and compiles
default_handlers = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
while True:
    if evaluates(iter_num):
        metrics = evaluate()
        metrics.update(data.capacity(metrics.get('val_acc', 0.0), n_trainable))   # memorization: bits/param
        improved = metrics['val_loss'] < best_val_loss
        best_val_loss = min(best_val_loss, metrics['val_loss'])
        if master:
            append_jsonl('log.jsonl', dict(iter=iter_num, tokens=iter_num * tokens_per_iter, **metrics))
            if wandb_log:
                wandb.log(metrics, step=iter_num)
            tqdm.write(f"eval {iter_num}: " + ', '.join(f"{k} {v:.4f}" for k, v in metrics.items()))
            if improved:
                save_best(metrics['val_loss'])
    due = iter_num >= max_iters or (checkpoint_interval and iter_num % checkpoint_interval == 0 and iter_num > 0)
    if due and iter_num != saved_iter:
        if master:
            save_checkpoint()
        saved_iter = iter_num
    if evaluates(iter_num) or due:
        t_log = time.perf_counter()  # evaluation and checkpoint time is not training time
    if iter_num >= max_iters:
        break

    lr = get_lr(iter_num)
    for group in optimizer.param_groups:
        group['lr'] = lr
    batch, data_state = next(stream)
    for micro, (x, y, weight) in enumerate(batch):
        x, y = to_device(x), to_device(y)
        sync = nullcontext() if not ddp or micro == grad_accum - 1 else model.no_sync()
        with sync:
            with autocast:
                _, loss = model(x, y)                 # training mode: no logits (model.ChunkedHeadLoss)
            loss = loss * weight
            scaler.scale(loss).backward()
        loss_accum += loss.detach()
    if grad_clip:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_([p for p in raw_model.parameters() if p.requires_grad], grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
    iters_since_log += 1
    pbar.update(1)

    if iter_num % log_interval == 0:  # the only host-device synchronisation outside evaluation (and DDP's stop)
        train_loss = all_reduce_sum([loss_accum.item() / iters_since_log])[0] / world_size
        dt = time.perf_counter() - t_log
        ms, tok_s = 1000 * dt / iters_since_log, tokens_per_iter * iters_since_log / dt
        mfu = flops_per_token * tok_s / (world_size * peak) if peak else None
        if master:
            append_jsonl('train_log.jsonl', dict(iter=iter_num, loss=train_loss, lr=lr, ms=ms, tok_s=tok_s, mfu=mfu))
            if wandb_log:
                wandb.log(dict(loss=train_loss, lr=lr, tok_s=tok_s, mfu=mfu), step=iter_num)
            tqdm.write(f"iter {iter_num}: loss {train_loss:.4f}, lr {lr:.2e}, {ms:.1f} ms/iter, {tok_s:,.0f} tok/s" +
                       (f", MFU {100 * mfu:.3g}%" if mfu is not None else ''))
            if mfu is not None and mfu > 1 and 'cached in' in peak_source and not peak_doubted:
                peak_doubted = True          # a peak measured while other jobs held the cores is too low
                tqdm.write(f"note: MFU above 100%: the CPU peak ({peak_source}) is below what this run achieves; "
                           f"delete that file to measure it again on an idle machine")
        loss_accum.zero_()
        t_log, iters_since_log = time.perf_counter(), 0

    stop = stop_signal
    if ddp:                              # every rank stops after the same step, so no collective is left waiting
        flag = torch.tensor([stop_signal], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        stop = int(flag.item())
    if stop and iter_num < max_iters:
        if master:
            save_checkpoint()
            append_jsonl('train_log.jsonl', dict(iter=iter_num, stopped=signal.Signals(stop).name))
            print(f"stopped by {signal.Signals(stop).name} at iteration {iter_num}: {ckpt_path} saved; continue "
                  f"with --init_from=resume", file=sys.stderr)
        pbar.close()
        if ddp:
            dist.barrier()
            dist.destroy_process_group()
        for sig, handler in default_handlers.items():
            signal.signal(sig, handler)
        sys.exit(128 + stop)

pbar.close()
for sig, handler in default_handlers.items():
    signal.signal(sig, handler)
if master:
    print(f"final ({task}, {model_args['variant']}, iter {iter_num}): " +
          ', '.join(f"{k} {v:.4f}" for k, v in metrics.items()))
    if wandb_log:
        wandb.finish()
if ddp:
    dist.barrier()                   # every rank is done with gloo / nccl before any tears it down
    dist.destroy_process_group()
