"""
One training loop for every task and variant, nanoGPT style: a single process on cpu / cuda / mps, or DDP
under torchrun (nccl on CUDA, gloo on CPU).

    python train.py config/cpu/retrieval_standard.py
    python train.py config/cpu/dyck1_mixit.py --max_iters=500 --device=cpu
    torchrun --standalone --nproc_per_node=8 train.py config/fineweb_mixit.py
    python train.py config/cpu/universal_dyck1.py --construction=sparse    # paper 2: only E and U train
    python train.py --help                                                 # every key, its default and comment

The global batch (`batch_size` sequences per optimizer step) is fixed: each rank takes its slice of the
same sampled batch and accumulates micro-batches of `micro_batch_size`, so the number of processes changes
only the time. Writes out_dir/log.jsonl (one record per evaluation), out_dir/train_log.jsonl (one per
log interval) and out_dir/ckpt.pt.
"""

import json
import math
import os
import sys
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm

import universal
from tasks import crop_unscored
from common import keep_freed_memory, make_task, model_args as make_model_args, resolve_device, resolve_dtype
from configurator import configure, declare, fail
from model import GPT, GPTConfig

# ----------------------------------------------------------------------------- I/O
out_dir = 'out'
eval_interval = 250
log_interval = 10
eval_iters = 10                 # micro-batches for the training-loss estimate
eval_batch_size = 0             # 0: micro_batch_size if set, else batch_size
always_save_checkpoint = True   # else only when val_loss improves
init_from = 'scratch'           # 'scratch' | 'resume' (out_dir/ckpt.pt) | path to a state_dict .pt (weights only)
seed = 1337
wandb_log = False               # log evaluations and training losses to Weights & Biases (pip install wandb)
wandb_project = 'learned-transformer'
wandb_run_name = ''             # '' -> out_dir's name
# ----------------------------------------------------------------------------- task (tasks.py)
task = 'retrieval'
task_seed = 0                   # seeds the test set and any fixed training set
fixed_train = False             # train on a fixed set of the paper's size instead of fresh samples each step
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
modular_addition_p = 599
modular_addition_all_pairs = False
decimal_addition_n_digits = 10
memorization_n_keys = 512
lm_data_dir = 'data/wikitext103'  # made by: python tasks.py prepare wikitext103 (or prepare <name> --input=files)
lm_block_size = 256             # training windows and non-overlapping test windows
lm_compact_vocab = False        # relabel the ids that occur to 0..K-1: a K-way output layer (CPU runs)
sentiment_data_dir = 'data/yelp'
sentiment_block_size = 256      # texts truncated / padded to this; the label is the target at the last token
sentiment_compact_vocab = False
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
min_lr_ratio = 0.1              # cosine decays to learning_rate * min_lr_ratio
# ----------------------------------------------------------------------------- system
device = 'auto'                 # auto | cpu | cuda | cuda:N | mps
dtype = 'auto'                  # auto | bfloat16 | float16 | float32 (auto on a CPU: its faster matmul)
compile = True                  # torch.compile the model
cpu_keep_memory = False         # CPU: malloc keeps freed memory for the next step (common.keep_freed_memory;
                                # faster large steps, but memory can grow: see its docstring)
# -----------------------------------------------------------------------------
config = configure(globals())


# ----------------------------------------------------------------------------- processes and devices
ddp = int(os.environ.get('RANK', -1)) != -1
try:
    device, device_type = resolve_device(device)
except ValueError as e:
    fail(e)
if ddp:
    rank, local_rank, world_size = (int(os.environ[k]) for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE'))
    if device_type == 'cuda':
        device = f'cuda:{local_rank}'
        torch.cuda.set_device(device)
    dist.init_process_group(backend='nccl' if device_type == 'cuda' else 'gloo')
else:
    rank, local_rank, world_size = 0, 0, 1
master = rank == 0
if device_type == 'cpu' and cpu_keep_memory and not keep_freed_memory():
    print("note: cpu_keep_memory needs glibc's malloc; ignored here", file=sys.stderr)
try:
    dtype, dtype_note = resolve_dtype(dtype, device_type)
except ValueError as e:
    fail(e)
if ddp and dtype_note:                           # a CPU's measured choice: every rank trains in rank 0's
    choice = [dtype]
    dist.broadcast_object_list(choice, src=0)
    dtype = choice[0]
ptdtype = getattr(torch, dtype)
autocast = nullcontext() if dtype == 'float32' else torch.autocast(device_type, dtype=ptdtype)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.manual_seed(seed)

if batch_size % world_size:
    fail(f"batch_size={batch_size} must be divisible by the number of processes ({world_size})")
rank_batch = batch_size // world_size
eval_batch_size = eval_batch_size or micro_batch_size or batch_size   # the same for any number of processes
micro_batch_size = micro_batch_size or rank_batch
if rank_batch % micro_batch_size:
    fail(f"per-process batch {rank_batch} must be divisible by micro_batch_size={micro_batch_size}")
grad_accum = rank_batch // micro_batch_size

# ----------------------------------------------------------------------------- task and model
if construction not in ('', 'sparse', 'looped'):
    fail(f"construction must be '', 'sparse' or 'looped', got {construction!r}")
if wandb_log and master:
    try:
        import wandb
    except ImportError:
        fail("wandb_log=True needs the wandb package: pip install wandb")
try:
    data = make_task(config)
    model_args = make_model_args(config, data.vocab_size, data.block_size)
except ValueError as e:
    fail(e)
T = data.block_size

iter_num, best_val_loss, checkpoint = 0, float('inf'), None
ckpt_path = os.path.join(out_dir, 'ckpt.pt')
if init_from == 'resume':
    if not os.path.isfile(ckpt_path):
        fail(f"init_from='resume' but there is no checkpoint at {ckpt_path}")
    checkpoint = torch.load(ckpt_path, map_location='cpu', weights_only=False)
    model_args = checkpoint['model_args']          # the checkpoint's shape wins over the config
    iter_num, best_val_loss = checkpoint['iter_num'], checkpoint['best_val_loss']
try:
    raw_model = GPT(GPTConfig(**model_args))
    if construction and checkpoint is None:        # paper 2: R_Q, R_K, R_V of a construction; E, U stay random
        universal.write_construction(raw_model, construction)
except ValueError as e:
    fail(e)
if checkpoint is not None:
    raw_model.load_state_dict(checkpoint['model'])
elif init_from != 'scratch':
    if not os.path.isfile(init_from):
        fail(f"init_from must be 'scratch', 'resume' or a state_dict file; {init_from} does not exist")
    try:
        raw_model.load_state_dict(torch.load(init_from, map_location='cpu', weights_only=True))
    except RuntimeError as e:
        fail(f"{init_from} does not fit this model: {str(e).splitlines()[0]} ...")
raw_model.to(device)

optimizer = raw_model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
scaler = torch.amp.GradScaler(device_type, enabled=dtype == 'float16')
data_rng = np.random.default_rng(seed)   # the same stream on every rank: each takes its slice of the batch
if checkpoint is not None:
    optimizer.load_state_dict(checkpoint['optimizer'])
    scaler.load_state_dict(checkpoint['scaler'])
    data_rng.bit_generator.state = checkpoint['data_rng']
    torch.set_rng_state(checkpoint['torch_rng'])
    checkpoint = None                                    # free memory

model = torch.compile(raw_model) if compile else raw_model   # raw_model keeps the un-prefixed state_dict
eval_model = model
if ddp:  # MixiT's static matrices are identical on every rank: no need to broadcast buffers each step
    model = DDP(model, device_ids=[local_rank] if device_type == 'cuda' else None, broadcast_buffers=False)


def to_device(a):
    t = torch.from_numpy(np.ascontiguousarray(a))
    if device_type == 'cuda':
        return t.pin_memory().to(device, non_blocking=True)
    return t.to(device)


crop = crop_unscored   # right-padded batches (sentiment, retrieval, Dyck): drop trailing unscored columns


def get_batch(rng):
    """This rank's share of one global training batch, as grad_accum (x, y, weight) micro-batches on the device.
    weight = world_size * (scored tokens in the micro-batch) / (scored tokens in the global batch): scaling each
    micro-batch's mean loss by it makes the gradient (after DDP's average over ranks) that of the mean loss
    over the whole global batch, however it is split into processes and micro-batches."""
    x, y = crop(*data.get_batch(batch_size, rng))
    n_scored = max(int((y >= 0).sum()), 1)
    x, y = x[rank * rank_batch:(rank + 1) * rank_batch], y[rank * rank_batch:(rank + 1) * rank_batch]
    return [(to_device(x[i:i + micro_batch_size]), to_device(y[i:i + micro_batch_size]),
             world_size * int((y[i:i + micro_batch_size] >= 0).sum()) / n_scored)
            for i in range(0, rank_batch, micro_batch_size)]


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
            logits, _ = eval_model(x, y)
        loss_sum += F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), ignore_index=-1, reduction='sum').item()
        for name, (num, den) in data.score(logits.argmax(-1).cpu().numpy(), y.cpu().numpy()).items():
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
            with autocast:
                train_loss += eval_model(to_device(x), to_device(y))[1].item() / eval_iters
    metrics['train_loss'] = all_reduce_sum([train_loss])[0]
    eval_model.train()
    return metrics


def get_lr(it):
    """Linear warmup, then cosine decay to learning_rate * min_lr_ratio at lr_decay_iters."""
    decay_iters = lr_decay_iters or max_iters
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it >= decay_iters:
        return learning_rate * min_lr_ratio
    progress = (it - warmup_iters) / max(1, decay_iters - warmup_iters)
    return learning_rate * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def save_checkpoint():
    """Atomically write out_dir/ckpt.pt: a temp file, fsync, rename — a kill mid-write never damages the last
    good checkpoint. Weights come from the uncompiled, unwrapped model (no '_orig_mod.' prefix)."""
    state = dict(model=raw_model.state_dict(), optimizer=optimizer.state_dict(), scaler=scaler.state_dict(),
                 model_args=model_args, iter_num=iter_num, best_val_loss=best_val_loss, config=config,
                 data_rng=data_rng.bit_generator.state, torch_rng=torch.get_rng_state())
    tmp = ckpt_path + '.tmp'
    with open(tmp, 'wb') as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, ckpt_path)
    dir_fd = os.open(out_dir, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def append_jsonl(name, record):
    with open(os.path.join(out_dir, name), 'a') as f:
        f.write(json.dumps(record) + '\n')


# ----------------------------------------------------------------------------- training loop
n_trainable, n_total = raw_model.num_params()
if master:
    os.makedirs(out_dir, exist_ok=True)
    if init_from != 'resume':  # a new run starts new logs; a resumed one appends to its own
        for name in ('log.jsonl', 'train_log.jsonl'):
            if os.path.exists(os.path.join(out_dir, name)):
                os.remove(os.path.join(out_dir, name))
    print(f"task {task} | variant {model_args['variant']} | {n_trainable:,} trainable of {n_total:,} parameters | "
          f"{world_size} process(es) on {device}, {dtype}{dtype_note} | global batch {batch_size} = "
          f"{micro_batch_size} x {grad_accum} accum x {world_size} ranks | {batch_size * T:,} tokens/iter")
    if wandb_log:
        wandb.init(project=wandb_project, name=wandb_run_name or os.path.basename(os.path.abspath(out_dir)),
                   config=config)
tokens_per_iter = batch_size * T
pbar = tqdm(total=max_iters, initial=iter_num, disable=None if master else True, dynamic_ncols=True, leave=False)
loss_accum, t_log, iters_since_log = torch.zeros((), device=device), time.perf_counter(), 0
while True:
    if iter_num % eval_interval == 0 or iter_num == max_iters:
        metrics = evaluate()
        metrics.update(data.capacity(metrics.get('val_acc', 0.0), n_trainable))   # memorization: bits/param
        if master:
            improved = metrics['val_loss'] < best_val_loss
            best_val_loss = min(best_val_loss, metrics['val_loss'])
            append_jsonl('log.jsonl', dict(iter=iter_num, tokens=iter_num * tokens_per_iter, **metrics))
            if wandb_log:
                wandb.log(metrics, step=iter_num)
            tqdm.write(f"eval {iter_num}: " + ', '.join(f"{k} {v:.4f}" for k, v in metrics.items()))
            if iter_num > 0 and (always_save_checkpoint or improved):
                save_checkpoint()
        t_log = time.perf_counter()  # evaluation time is not training time
    if iter_num >= max_iters:
        break

    lr = get_lr(iter_num)
    for group in optimizer.param_groups:
        group['lr'] = lr
    for micro, (x, y, weight) in enumerate(get_batch(data_rng)):
        sync = nullcontext() if not ddp or micro == grad_accum - 1 else model.no_sync()
        with sync:
            with autocast:
                _, loss = model(x, y)
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

    if iter_num % log_interval == 0:  # the only host-device synchronisation outside evaluation
        train_loss = all_reduce_sum([loss_accum.item() / iters_since_log])[0] / world_size
        dt = time.perf_counter() - t_log
        ms, tok_s = 1000 * dt / iters_since_log, tokens_per_iter * iters_since_log / dt
        if master:
            append_jsonl('train_log.jsonl', dict(iter=iter_num, loss=train_loss, lr=lr, ms=ms, tok_s=tok_s))
            if wandb_log:
                wandb.log(dict(loss=train_loss, lr=lr, tok_s=tok_s), step=iter_num)
            tqdm.write(f"iter {iter_num}: loss {train_loss:.4f}, lr {lr:.2e}, {ms:.1f} ms/iter, {tok_s:,.0f} tok/s")
        loss_accum.zero_()
        t_log, iters_since_log = time.perf_counter(), 0

pbar.close()
if master:
    print(f"final ({task}, {model_args['variant']}, iter {iter_num}): " +
          ', '.join(f"{k} {v:.4f}" for k, v in metrics.items()))
if ddp:
    dist.destroy_process_group()
