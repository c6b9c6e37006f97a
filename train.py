"""
One training loop for every task and variant, nanoGPT style: a single process on cpu / cuda / mps, or DDP
under torchrun (nccl on CUDA, gloo on CPU).

    python train.py config/cpu/dyck1_standard.py
    python train.py config/cpu/dyck1_mixit.py --max_iters=500 --device=cpu
    python train.py config/cpu/dyck1_mixit.py --init_from=resume --max_iters=3000   # continue out_dir's run
    torchrun --standalone --nproc_per_node=8 train.py config/fineweb_mixit.py
    python train.py config/cpu/universal_dyck1.py --construction=sparse    # paper 2: only E and U train
    python train.py --help                                                 # every key, its default and comment

The global batch (`batch_size` sequences per step) is fixed: each rank takes its slice and accumulates
micro-batches, so the number of processes changes only the time. A run writes out_dir/log.jsonl (evaluations),
train_log.jsonl (training losses), ckpt.pt (to resume) and ckpt_best.pt (the lowest val_loss's weights). What
keeps a run safe and fast is beside the loop, one call each: checkpoint.py (atomic files, exact resume),
run_guard.py (lock, signals, faults), memory.py (the memory pre-check), prefetch.py, head_loss.py, hardware.py. See
docs/runs.md.
"""

import inspect
import math
import os
import signal
import sys
import time
from contextlib import nullcontext
from functools import partial

import numpy as np
import torch
import torch._functorch.config
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm

import checkpoint
import tasks
from configurator import configure, declare, declare_keys, fail
from hardware import (allow_tf32, cpu_peak_flops, flops_per_token, init_process_group, partitioner_settings,
                      peak_flops, resolve_device, resolve_dtype)
from head_loss import HeadLoss
from memory import check_memory, keep_freed_memory
from model import GPT, GPTConfig
from prefetch import batches, default_prefetch
from run_guard import StopSignals, check_finite, collective_faults, lock_dir
from runconfig import (check_train_flags, make_task, model_args as make_model_args, run_out_dir,
                       write_construction)
from tasks import crop_unscored

# ----------------------------------------------------------------------------- I/O
out_dir = 'out'                 # the run's folder: logs, checkpoints (docs/runs.md)
eval_interval = 250             # iterations between evaluations (log.jsonl; ckpt_best.pt when val_loss improves)
log_interval = 10               # iterations between training-loss records (train_log.jsonl)
checkpoint_interval: int | None = None   # iterations between writes of ckpt.pt (and at the end); None: eval_interval
checkpoint_frozen = True        # False: ckpt.pt holds only trained weights (frozen ones rebuilt and checked on resume)
eval_iters = 10                 # micro-batches for the training-loss estimate
eval_batch_size = 0             # 0: micro_batch_size if set, else batch_size
init_from = 'scratch'           # 'scratch' | 'resume' (out_dir/ckpt.pt) | a weights file (state_dict, ckpt*.pt)
overwrite = False               # a new run replaces the run in out_dir (deletes its logs and checkpoints)
seed = 1337                     # the model's init and the training stream
wandb_log = False               # log evaluations and training losses to Weights & Biases (pip install wandb)
wandb_project = 'learned-transformer'  # the Weights & Biases project
wandb_run_name = ''             # '' -> out_dir's name
# ----------------------------------------------------------------------------- task (tasks.py)
task = 'retrieval'              # a task of tasks.py; its settings are the <task>_* keys below
task_seed = 0                   # seeds the test set and any fixed training set
fixed_train = False             # train on a fixed set of the paper's size instead of fresh samples each step
train_order = 'replacement'     # a fixed training set: 'replacement' | 'epochs', shuffled (the authors' Trainer)
train_on_test = False           # fresh samples may repeat test examples, as the authors' streams (Dyck-1 configs)
n_train = 0                     # 0: the paper's size
n_test = 0                      # 0: the paper's size
declare_keys(globals(), *tasks.settings())  # every task's <task>_<setting>, written once in tasks.py
# ----------------------------------------------------------------------------- model (model.py)
declare(globals(), GPTConfig, n_layer=2, n_head=4, n_embd=128)   # every GPTConfig field is a key (--help)
block_size = 0                  # sequence length; 0: the task's (lm, sentiment: 256; the others fix theirs)
construction = ''               # paper 2: '' | 'sparse' | 'sparse_identity' | 'looped': fixed attention at init
# ----------------------------------------------------------------------------- optimizer
batch_size = 256                # global batch, sequences per optimizer step
micro_batch_size = 0            # sequences per forward pass and rank; 0: batch_size // world_size
max_iters = 5000                # optimizer steps
learning_rate = 1e-3            # AdamW's peak rate, after the warm-up
weight_decay = 0.1              # AdamW's, on matrices only (not norms, biases, embeddings' pads)
beta1 = 0.9                     # AdamW's first-moment decay
beta2 = 0.95                    # AdamW's second-moment decay
grad_clip = 1.0                 # 0: off
warmup_iters = 100              # steps of linear warm-up to learning_rate
lr_decay_iters = 0              # 0: max_iters
lr_schedule = 'cosine'          # after warm-up: 'cosine' | 'linear' decay to learning_rate * min_lr_ratio
min_lr_ratio = 0.1              # the decay ends at learning_rate * min_lr_ratio
# ----------------------------------------------------------------------------- system
device = 'auto'                 # auto | cpu | cuda | cuda:N | mps
ddp_backend = ''                # under torchrun: '' -> nccl on CUDA, gloo on a CPU (on CUDA: processes share a GPU)
ddp_timeout = 600.0             # seconds a collective waits for the other processes (one stopped or stuck: exit 3)
dtype = 'auto'                  # auto (a CPU: its faster matmul) | bfloat16 | float16 | float32 | float64 (a check)
compile = True                  # torch.compile the model
chunked_loss = True             # the head's loss in chunks, no (B, T, V) logits (head_loss.py); False: model.py's
recompute_pointwise = True      # compiled: the backward recomputes norms, rotary, SiLU (hardware.partitioner_settings)
activation_memory_budget = 1.0  # compiled: < 1 keeps this share of activations, recomputing the rest (matmuls too)
memory_check = True             # refuse a model + micro-batch that would not fit (memory.memory_estimate)
cpu_keep_memory = False         # CPU: malloc keeps freed memory for the next step (memory.keep_freed_memory)
prefetch: int | None = None     # batches a worker draws ahead (the same ones; prefetch.py); None: 2 on a GPU, else 0
# -----------------------------------------------------------------------------
cli_given = {}                  # {key: 'flag' or its config file} for every key the command line sets
config = configure(dict(globals()), given=cli_given, console='quiet')   # live below, once the run's are known
config['out_dir'] = out_dir = run_out_dir(config, cli_given)   # flags that change the run: a folder of its own
# every check from here to the first step raises ValueError: one line `error: ...`, exit 2 (configurator.fail)
try:
    notes = check_train_flags(config)             # settings that may surprise, printed below

    # ------------------------------------------------------------------------- out_dir: a new run or a resumed one
    ckpt_path, best_path = checkpoint.run_paths(out_dir)
    # resumed: config takes the checkpoint's keys; new: out_dir may hold no run (unless --overwrite=True)
    ckpt = checkpoint.resume(out_dir, config, cli_given) if config['init_from'] == 'resume' else \
        checkpoint.check_new_run(out_dir, config['overwrite'])
    if ckpt is not None:
        check_train_flags(config)                 # the checkpoint's settings pass the checks a config file's do
    globals().update(config)    # every setting live from here: the command line's, or on resume the checkpoint's
    iter_num, best_val_loss = (ckpt['iter_num'], ckpt['best_val_loss']) if ckpt else (0, float('inf'))
    save_interval = eval_interval if checkpoint_interval is None else checkpoint_interval   # iterations, ckpt.pt

    # ------------------------------------------------------------------------- processes and devices
    ddp = int(os.environ.get('RANK', -1)) != -1   # under torchrun
    device, device_type = resolve_device(device)
    rank, world_size, device = (0, 1, device) if not ddp else \
        init_process_group(device, device_type, ddp_backend, batch_size, ddp_timeout)
    master = rank == 0
    if device_type == 'cpu' and cpu_keep_memory and not keep_freed_memory():
        print("note: cpu_keep_memory needs glibc's malloc; ignored here", file=sys.stderr)
    dtype, dtype_note = resolve_dtype(dtype, device_type, float64=True)
    if ddp and dtype_note:                        # a CPU's measured choice: every rank trains in rank 0's
        choice = [dtype]
        dist.broadcast_object_list(choice, src=0)
        dtype = choice[0]
    ptdtype = getattr(torch, dtype)
    autocast = nullcontext() if dtype in ('float32', 'float64') else torch.autocast(device_type, dtype=ptdtype)
    allow_tf32()
    torch.manual_seed(seed)

    rank_batch = batch_size // world_size
    eval_batch = eval_batch_size or micro_batch_size or batch_size    # the same for any number of processes
    micro_batch = micro_batch_size or rank_batch
    if rank_batch % micro_batch:
        raise ValueError(f"per-process batch {rank_batch} must be divisible by micro_batch_size={micro_batch_size}")
    grad_accum = rank_batch // micro_batch

    # ------------------------------------------------------------------------- task and model
    if wandb_log and master:
        try:
            import wandb
        except ImportError:
            raise ValueError("wandb_log=True needs the wandb package: pip install wandb") from None
    data = make_task(config)
    model_args = make_model_args(config, data)
    T = data.block_size
    if train_order == 'epochs' and data.fixed_rows() is None:
        raise ValueError(f"--train_order=epochs needs a fixed training set, and {task} samples fresh examples "
                         f"(--fixed_train=True fixes one for the synthetic tasks)")
    if ckpt is not None:                          # its model_args checked as a config file's, then against the task
        gpt_config = checkpoint.gpt_config(ckpt['model_args'], ckpt_path)
        model_args = checkpoint.same_model(ckpt, model_args, out_dir)
    else:
        gpt_config = GPTConfig.from_keys(**model_args)
    if master:                                    # one run per out_dir (under DDP rank 0 writes it)
        lock_dir(out_dir)
    if memory_check:                              # before any weight is allocated
        check_memory(gpt_config, micro_batch, T, dtype, device, device_type, batch_size, eval_batch)
    raw_model = GPT(gpt_config)
    n_trainable, n_total = raw_model.num_params()
    data.params = n_trainable                     # memorization scores bits per trainable parameter (Task.score)
    if ckpt is not None:                          # frozen weights left out of it are drawn again, and checked
        checkpoint.restore(raw_model, ckpt, ckpt_path, construct=write_construction)
    elif construction:                            # paper 2: R_Q, R_K, R_V of a construction; E, U stay random
        write_construction(raw_model, construction)
    if init_from not in ('scratch', 'resume'):
        checkpoint.load_weights_file(raw_model, init_from)
    raw_model.to(device, dtype=torch.float64) if dtype == 'float64' else raw_model.to(device)

    optimizer = raw_model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == 'float16')
    # the data state: the training stream's RNG (the same on every rank: each takes its slice of the batch) and,
    # with train_order='epochs', the examples gone through so far; what ckpt.pt keeps, to draw the next batch
    data_state = np.random.default_rng(seed).bit_generator.state, 0
    if ckpt is not None:
        data_state = checkpoint.restore_training_state(ckpt, ckpt_path, optimizer, scaler)
    ahead = default_prefetch(prefetch, device_type)      # batches a worker draws ahead
except ValueError as e:
    fail(e)
identity, ckpt = checkpoint.identity(config, ckpt), None   # the run's id and data (kept with its files); free memory

for key, value in partitioner_settings(activation_memory_budget, recompute_pointwise).items():
    setattr(torch._functorch.config, key, value)                                 # read when a graph compiles
# the loss: the head's in chunks (head_loss.py; its softmax step compiled on a GPU), or model.py's plain one
model = HeadLoss(raw_model, chunked=chunked_loss, fused=compile and device_type == 'cuda')
# static shapes: each batch shape compiles a graph of its own (the LM configs evaluate in batches of the training
# micro-batch's size), rather than a second shape turning every later graph symbolic in the batch
model = torch.compile(model, dynamic=False) if compile else model   # raw_model: the un-prefixed state_dict
eval_model = model
if ddp:  # MixiT's static matrices are identical on every rank: no need to broadcast buffers each step
    no_sync = 'forward_sync_buffers' in inspect.signature(DDP.__init__).parameters    # its name in newer torch
    model = DDP(model, device_ids=[torch.device(device).index] if device_type == 'cuda' else None,
                **{'forward_sync_buffers' if no_sync else 'broadcast_buffers': False})


def to_device(a):
    t = torch.from_numpy(np.ascontiguousarray(a))
    return t.pin_memory().to(device, non_blocking=True) if device_type == 'cuda' else t.to(device)


# right-padded batches (sentiment, retrieval, Dyck) drop their trailing unscored columns, which a causal model's
# scored outputs do not depend on; compiled, to a multiple of 64 (a graph for each of a few lengths, not each length)
crop = partial(crop_unscored, multiple=64 if compile else 1) if model_args['causal'] else (lambda x, y: (x, y))


def draw_batch(rng, start):
    """This rank's share of one global batch (drawn with rng, or examples start.. of the epochs' stream), as
    grad_accum (x, y, weight) micro-batches: weight = world_size * the micro-batch's share of the global batch's
    scored tokens, so the gradient is the global batch's mean loss's, however the batch is split."""
    mine = slice(rank * rank_batch, (rank + 1) * rank_batch)
    if data.sample_rows is not None:    # every target scored (lm): this rank reads only its rows of the batch
        x, y = data.get_batch(batch_size, rng, rows=mine)
        n_scored = batch_size * y.shape[1]
    else:
        x, y = crop(*(data.epoch_batch(batch_size, start, seed) if train_order == 'epochs' else
                      data.get_batch(batch_size, rng)))
        n_scored = max(int((y >= 0).sum()), 1)
        x, y = x[mine], y[mine]
    return [(x[i:i + micro_batch], y[i:i + micro_batch],
             world_size * int((y[i:i + micro_batch] >= 0).sum()) / n_scored)
            for i in range(0, rank_batch, micro_batch)]


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
    for i in range(lo, hi, eval_batch):
        x, y = map(to_device, crop(x_all[i:min(i + eval_batch, hi)], y_all[i:min(i + eval_batch, hi)]))
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
        x, y = crop(*data.get_batch(eval_batch, rng))
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


def save_checkpoint():
    """out_dir/ckpt.pt: everything a resumed run needs (checkpoint_frozen=False: the trained weights only)."""
    checkpoint.save(ckpt_path, raw_model, trained_only=not checkpoint_frozen, optimizer=optimizer.state_dict(),
                    scaler=scaler.state_dict(), model_args=model_args, iter_num=iter_num, best_val_loss=best_val_loss,
                    config=config, data_rng=data_state[0], data_start=data_state[1], torch_rng=torch.get_rng_state(),
                    **identity)


def log(name, record):
    checkpoint.append_jsonl(os.path.join(out_dir, name), dict(record, run=identity['run']))
    if wandb_log:
        wandb.log({k: v for k, v in record.items() if k != 'iter' and not isinstance(v, str)}, step=record['iter'])


# ----------------------------------------------------------------------------- training loop
evaluates = lambda it: it % eval_interval == 0 or it == max_iters
# MFU on the log line: model FLOPs / (processes x device peak), the output layer at the evaluation set's share of
# scored tokens
step_flops = flops_per_token(raw_model, T, scored=float((data.eval_set()[1] >= 0).mean()))
peak, peak_source = peak_flops(device, device_type, dtype)
if master:
    for note in notes:
        print(f'note: {note}', file=sys.stderr)
    checkpoint.start_logs(out_dir, iter_num if init_from == 'resume' else None, evaluates(iter_num))
    print(f"{out_dir} | task {task} | variant {model_args['variant']} | {n_trainable:,} trainable of {n_total:,} "
          f"parameters | "
          f"{world_size} process(es) on {device}, {dtype}{dtype_note} | global batch {batch_size} = "
          f"{micro_batch} x {grad_accum} accum x {world_size} ranks | {batch_size * T:,} tokens/iter" +
          (f" | resumed at iteration {iter_num}" if init_from == 'resume' else '') +
          (f" | MFU against {peak / 1e12:.3g} TFLOP/s ({peak_source})" if peak else ''))
    if wandb_log:
        wandb.init(project=wandb_project, name=wandb_run_name or os.path.basename(os.path.abspath(out_dir)),
                   config=config)
tokens_per_iter = batch_size * T
saved_iter = iter_num if init_from == 'resume' else -1     # the iteration ckpt.pt holds
pbar = tqdm(total=max_iters, initial=iter_num, disable=None if master else True, dynamic_ncols=True, leave=False)
# the logged training loss averages the steps since the last record: summed on the device, so that logging is the
# only host-device synchronisation (besides DDP's agreement after each step on whether a signal asked to stop)
loss_accum = torch.zeros((), device=device, dtype=torch.float64 if dtype == 'float64' else torch.float32)
t_log, iters_since_log = time.perf_counter(), 0
peak_doubted = False            # a note was printed that the cached CPU peak is below the achieved rate
stream = batches(draw_batch, data_state, batch_size, ahead)   # a prefetching worker starts drawing now
# SIGINT / SIGTERM / SIGHUP: stop after the step under way, with ckpt.pt saved; a process lost: one line, exit 3
with StopSignals() as signals, collective_faults(ckpt_path, ddp_timeout):
    while True:
        if evaluates(iter_num):
            metrics = evaluate()
            improved = metrics['val_loss'] < best_val_loss
            best_val_loss = min(best_val_loss, metrics['val_loss'])
            if master:
                log('log.jsonl', dict(iter=iter_num, tokens=iter_num * tokens_per_iter, **metrics))
                tqdm.write(f"eval {iter_num}: " + ', '.join(f"{k} {v:.4f}" for k, v in metrics.items()))
                if improved:
                    checkpoint.save(best_path, raw_model, model_args=model_args, config=config, iter_num=iter_num,
                                    val_loss=metrics['val_loss'], **identity)
            check_finite(metrics['val_loss'], 'val_loss', iter_num, ckpt_path)     # diverged: exit 3, ckpt.pt kept
        due = iter_num >= max_iters or (save_interval and iter_num % save_interval == 0 and iter_num > 0)
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

        if iter_num % log_interval == 0:  # the only host-device synchronisation outside evaluation (and DDP's stop)
            train_loss = all_reduce_sum([loss_accum.item() / iters_since_log])[0] / world_size
            dt = time.perf_counter() - t_log
            ms, tok_s = 1000 * dt / iters_since_log, tokens_per_iter * iters_since_log / dt
            mfu = step_flops * tok_s / (world_size * peak) if peak else None
            if master:
                log('train_log.jsonl', dict(iter=iter_num, loss=train_loss, lr=lr, ms=ms, tok_s=tok_s, mfu=mfu))
                tqdm.write(f"iter {iter_num}: loss {train_loss:.4f}, lr {lr:.2e}, {ms:.1f} ms/iter, {tok_s:,.0f} "
                           f"tok/s" + (f", MFU {100 * mfu:.3g}%" if mfu is not None else ''))
                if mfu is not None and mfu > 1 and device_type == 'cpu' and not peak_doubted:
                    peak_doubted = True          # a peak measured while other jobs held the cores is too low
                    peak, peak_source = cpu_peak_flops(dtype, floor=step_flops * tok_s / world_size)
                    tqdm.write(f"note: MFU above 100%: the CPU peak was below what this run achieves; measured "
                               f"again: {peak / 1e12:.3g} TFLOP/s ({peak_source})")
            check_finite(train_loss, 'training loss', iter_num, ckpt_path, tolerated=scaler.is_enabled())
            loss_accum.zero_()
            t_log, iters_since_log = time.perf_counter(), 0

        stop = signals.signum
        if ddp:                              # every rank stops after the same step, so no collective is left waiting
            flag = torch.tensor([stop], device=device)
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
            stop = int(flag.item())
        if stop and iter_num < max_iters:
            if master:
                save_checkpoint()
                log('train_log.jsonl', dict(iter=iter_num, stopped=signal.Signals(stop).name))
                print(f"stopped by {signal.Signals(stop).name} at iteration {iter_num}: {ckpt_path} saved; continue "
                      f"with --init_from=resume", file=sys.stderr)
            pbar.close()
            if ddp:
                dist.barrier()
                dist.destroy_process_group()
            sys.exit(128 + stop)

pbar.close()
if master:
    print(f"final ({task}, {model_args['variant']}, iter {iter_num}): " +
          ', '.join(f"{k} {v:.4f}" for k, v in metrics.items()))
    if wandb_log:
        wandb.finish()
if ddp:
    dist.barrier()                   # every rank is done with gloo / nccl before any tears it down
    dist.destroy_process_group()
