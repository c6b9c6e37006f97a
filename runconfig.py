"""
A train.py config, resolved: the task it names (tasks.py) and its model's GPTConfig arguments (model.py), as
train.py, bench.py, sample.py and sde.py build them.
"""

import importlib
import os
from inspect import signature

import tasks
from model import GPTConfig


def make_task(config, n_test=None):
    """The task a train.py config names: config['task'] with its `<task>_*` keys, task_seed, fixed_train,
    train_on_test, n_train / n_test when non-zero (n_test given here wins: bench.py needs only the task's shape),
    and block_size when non-zero for a task whose sequence length is a setting (lm, sentiment). Raises ValueError
    (an unknown task or setting) or tasks.DataError (data not prepared)."""
    name = config['task']
    args = {k[len(name) + 1:]: v for k, v in config.items() if k.startswith(name + '_')}
    args.update(seed=config.get('task_seed', 0), fixed_train=config.get('fixed_train', False))
    args.update({k: config[k] for k in ('n_train', 'n_test') if config.get(k)})
    if config.get('block_size') and name in tasks.TASKS and 'block_size' in signature(tasks.TASKS[name]).parameters:
        args['block_size'] = config['block_size']      # lm, sentiment: the sequence length is the model's
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
    """GPTConfig.from_keys's arguments from the keys of config that name its fields; the task fixes vocab_size,
    n_class and pad_id (a config may only repeat them), and block_size 0 means the task's sequence length.
    Raises ValueError when block_size is below the task's sequence length, n_class or pad_id differ from the
    task's, a size is out of range (check_shape), or causal=False meets a task whose inputs hold its answers."""
    check_shape({k: v for k, v in config.items() if k != 'vocab_size'})
    args = {f.name: config[f.name] for f in GPTConfig.key_fields() if f.name in config}
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


def write_construction(model, name):
    """Paper 2's fixed attention weights of construction `name` written into a universal model
    (universal.write_construction), its script imported only here, when a run names a construction or resumes one:
    the loop and the modules import no paper's script. Raises ValueError as that function does."""
    return importlib.import_module('universal').write_construction(model, name)


def identity_keys(config):
    """The keys that change what a run trains: the task and its `<task>_*` settings, the model's GPTConfig fields,
    the seeds and paper 2's construction."""
    task = config.get('task', '')
    return {'task', 'seed', 'task_seed', 'construction', *(f.name for f in GPTConfig.key_fields()),
            *(k for k in config if task and k.startswith(task + '_'))}


def run_out_dir(config, given):
    """The folder a run writes: out_dir as given, unless a config file (or train.py's default) set it and flags
    change what is trained (identity_keys): then that folder with the flags appended, in the order given, e.g.
    out/cpu/dyck1_standard-variant_frozen_qk-seed_2, so that a command-line change never writes into the config's
    own run. given: {key: 'flag' or its config file}, from configurator.configure."""
    if given.get('out_dir') == 'flag':
        return config['out_dir']
    keys = identity_keys(config)
    changed = [k for k, source in given.items() if source == 'flag' and k in keys]
    shown = lambda v: ','.join(map(str, v)) if isinstance(v, tuple) else str(v)
    suffix = ''.join(f"-{k}_{shown(config[k]).replace(os.sep, '_')}" for k in changed)
    return config['out_dir'].rstrip(os.sep) + suffix


def check_train_flags(c):
    """Raise ValueError naming the first of train.py's settings c (a dict) that is out of range. Returns notes
    (strings) on settings that are valid but may surprise: a run whose max_iters ends inside the warm-up."""
    positive = ('batch_size', 'eval_interval', 'log_interval', 'eval_iters')
    non_negative = ('max_iters', 'micro_batch_size', 'eval_batch_size', 'n_train', 'n_test', 'warmup_iters',
                    'lr_decay_iters', 'weight_decay', 'grad_clip', 'seed', 'task_seed', 'checkpoint_interval',
                    'prefetch')
    for key in positive:
        if c[key] < 1:
            raise ValueError(f"--{key} must be >= 1, got {c[key]}")
    for key in non_negative:
        if (c[key] or 0) < 0:
            raise ValueError(f"--{key} must be >= 0, got {c[key]}")
    for key in ('seed', 'task_seed'):                 # torch and numpy take seeds below 2**64
        if c[key] >= 2 ** 64:
            raise ValueError(f"--{key} must be < 2**64, got {c[key]}")
    choices = dict(lr_schedule=('cosine', 'linear'), train_order=('replacement', 'epochs'),
                   ddp_backend=('', 'nccl', 'gloo'), construction=('', 'sparse', 'sparse_identity', 'looped'))
    ranges = dict(learning_rate=(c['learning_rate'] > 0, '> 0'),
                  activation_memory_budget=(0 <= c['activation_memory_budget'] <= 1, 'in [0, 1]'),
                  min_lr_ratio=(0 <= c['min_lr_ratio'] <= 1, 'in [0, 1]'),
                  beta1=(0 <= c['beta1'] < 1, 'in [0, 1)'), beta2=(0 <= c['beta2'] < 1, 'in [0, 1)'))
    for key, (ok, what) in ranges.items():
        if not ok:
            raise ValueError(f"--{key} must be {what}, got {c[key]}")
    for key, allowed in choices.items():
        if c[key] not in allowed:
            raise ValueError(f"--{key} must be {', '.join(map(repr, allowed[:-1]))} or {allowed[-1]!r}, "
                             f"got {c[key]!r}")
    out_dir, init_from = c['out_dir'], c['init_from']
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError(f"--out_dir={out_dir} is a file, not a folder")
    if init_from == 'resume' and c['overwrite']:
        raise ValueError("--overwrite=True starts a new run; it cannot go with --init_from=resume")
    if init_from not in ('scratch', 'resume') and not os.path.isfile(init_from):
        raise ValueError(f"--init_from must be 'scratch', 'resume' or a weights file; {init_from} "
                         f"{'is a folder' if os.path.isdir(init_from) else 'does not exist'}")
    if 0 < c['max_iters'] < c['warmup_iters']:
        return [f"max_iters={c['max_iters']} ends inside the warm-up (warmup_iters={c['warmup_iters']}): the learning "
                f"rate never reaches learning_rate={c['learning_rate']}"]
    return []
