"""
A run's files in its out_dir, read and written so that no fault loses work: ckpt.pt (all that resuming needs),
ckpt_best.pt (the best weights so far), log.jsonl and train_log.jsonl. Every file is replaced atomically (a kill
at any moment leaves the old one or the new one), a failed write says so in one line and keeps the old file, a
resumed run cuts the logs back to its checkpoint's iteration and takes the checkpoint's config, and a checkpoint
of the trained weights only has its frozen ones rebuilt and checked against their fingerprints.
"""

import hashlib
import json
import os
import sys
from dataclasses import MISSING

import torch

import text_data
from configurator import FAULT, ConfigError, check, fail, saved_with_current_names
from files import cause, replace_atomically
from model import GPT, GPTConfig

RUN_FILES = ('ckpt.pt', 'ckpt_best.pt', 'log.jsonl', 'train_log.jsonl')   # what makes an out_dir hold a run
MODEL_KEYS = [f.name for f in GPTConfig.key_fields()] + ['construction']
TASK_KEYS = ['task', 'task_seed', 'fixed_train', 'train_on_test', 'n_train', 'n_test']


def run_paths(out_dir):
    """(ckpt.pt, ckpt_best.pt) of the run in out_dir: the last checkpoint (to resume) and the best weights."""
    return os.path.join(out_dir, 'ckpt.pt'), os.path.join(out_dir, 'ckpt_best.pt')

# ----------------------------------------------------------------------------- reading

def load_checkpoint(path, keys=('model', 'model_args'), trained_only=False, mmap=False):
    """The dict that train.py saved at path (ckpt.pt or ckpt_best.pt), loaded onto the CPU with
    torch.load(weights_only=True): tensors and plain values only, nothing in the file is executed. keys: what
    it must hold; trained_only: whether a ckpt.pt of only the trained weights (train.py checkpoint_frozen=False;
    its 'frozen' holds the others' frozen_fingerprint) will do, as for resuming. Raises ValueError, one line
    naming the file, when the file is missing, a folder, empty, truncated, not a torch file, lacks one of keys,
    holds only the trained weights where trained_only is False, or is corrupted: its tensors' bytes differ from the
    SHA-256 saved with them (tensors_sha256; torch.load checks no CRC, and a checkpoint written before it had one
    loads unchecked). mmap: map the tensors rather than read them."""
    if not os.path.exists(path):
        raise ValueError(f"{path} does not exist")
    if not os.path.isfile(path):
        raise ValueError(f"{path} is not a file")
    try:                       # one open file, read once: a run replacing path meanwhile cannot mix two versions
        f = open(path, 'rb')
    except OSError as e:
        raise ValueError(f"cannot read {path}: {cause(e)}") from None
    with f:
        if os.fstat(f.fileno()).st_size == 0:
            raise ValueError(f"{path} is empty (0 bytes), not a checkpoint")
        try:
            obj = torch.load(path if mmap else f, map_location='cpu', weights_only=True, mmap=mmap)
        except OSError as e:   # the disk, not the file: an I/O error is not a truncated checkpoint
            raise ValueError(f"cannot read {path}: {cause(e)}") from None
        except Exception as e:     # zip / pickle / EOF errors of a truncated or foreign file
            raise ValueError(f"{path} is not a readable checkpoint (truncated, or not a torch file: "
                             f"{type(e).__name__})") from None
    if isinstance(obj, dict) and 'sha256' in obj and \
            tensors_sha256({k: v for k, v in obj.items() if k != 'sha256'}) != obj['sha256']:
        raise ValueError(f"{path} is corrupted: its tensors differ from the SHA-256 saved with them (a damaged disk "
                         f"or copy); use another copy of it, or the ckpt_best.pt beside it")
    missing = [k for k in keys if not isinstance(obj, dict) or k not in obj]
    if missing:
        raise ValueError(f"{path} is not a checkpoint of train.py (it has no {missing[0]!r})")
    if 'frozen' in obj and not trained_only:
        raise ValueError(f"{path} holds only the trained weights (a run with checkpoint_frozen=False): use the "
                         f"ckpt_best.pt beside it, or train on from it with --init_from=resume")
    return obj


def tensors_sha256(obj):
    """SHA-256 (hex) over the dtype, shape and bytes of every tensor in obj (nested dicts, lists and tuples), in
    their order: what save stores in a checkpoint under 'sha256' and load_checkpoint checks."""
    h = hashlib.sha256()

    def walk(o):
        if isinstance(o, torch.Tensor):
            t = o.detach().cpu().contiguous().reshape(-1)
            h.update(f'{t.dtype}{tuple(o.shape)}'.encode())
            h.update(t.view(torch.uint8).numpy())
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v)
    walk(obj)
    return h.hexdigest()


def saved_iteration(path):
    """The iteration of the checkpoint at path (its iter_num), or None when there is none that can be read."""
    try:
        return int(torch.load(path, map_location='cpu', weights_only=True, mmap=True)['iter_num'])
    except Exception:
        return None


def last_checkpoint(ckpt_path):
    """Where a run that ends on a fault stands, in words: the iteration of its last complete ckpt.pt."""
    it = saved_iteration(ckpt_path)
    return (f"{ckpt_path} is from iteration {it}: continue with --init_from=resume" if it is not None else
            f"no {os.path.basename(ckpt_path)} was saved yet")


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


def load_weights_file(model, path):
    """Load the weights in path (a state_dict, or a ckpt.pt / ckpt_best.pt, whose 'model' is taken) into model
    (train.py's --init_from=<file>). Raises ValueError naming path (load_checkpoint, load_weights)."""
    weights = load_checkpoint(path, keys=())
    if isinstance(weights, dict) and isinstance(weights.get('model'), dict):
        weights = weights['model']
    load_weights(model, weights, path)


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


def restore(model, checkpoint, path, construct=None):
    """Put the weights of checkpoint (read from path) into model, a GPT built from its model_args right after
    torch.manual_seed of its config's seed. A ckpt.pt of the trained weights only (checkpoint_frozen=False: its
    'frozen' holds the others' frozen_fingerprint) keeps model's own frozen weights, drawn again by that seed and,
    when the config names paper 2's construction, written by construct(model, construction) (universal.py's
    write_construction: passed in, so that this module imports no paper's script). Raises ValueError naming path
    when the weights do not fit the model, or the frozen ones rebuilt differ from the run's."""
    frozen, construction = checkpoint.get('frozen'), checkpoint['config'].get('construction')
    if frozen is not None and construction:
        if construct is None:
            raise ValueError(f"{path}: its frozen weights are paper 2's {construction!r} construction, which this "
                             f"script cannot write (universal.write_construction)")
        construct(model, construction)
    load_weights(model, checkpoint['model'], path, without=frozen or ())
    differ = frozen_mismatch(frozen, model) if frozen is not None else []
    if differ:
        more = f' and {len(differ) - 1} more' if len(differ) > 1 else ''
        raise ValueError(f"{path} holds only the trained weights, and the frozen ones rebuilt from its config "
                         f"differ from the run's ({differ[0]}{more}): another torch version or construction?")


def gpt_config(model_args, path):
    """model.GPTConfig of a checkpoint's model_args, each value checked as a config file's (its field's type and
    GPTConfig's own ranges). Raises ValueError, one line naming path: a field this model.py lacks (a checkpoint of
    another version), a value of the wrong type, or one out of range."""
    known = {f.name: f for f in GPTConfig.key_fields()}
    if not isinstance(model_args, dict):
        raise ValueError(f"{path}: its model_args are not a dict of GPTConfig fields")
    unknown = [k for k in model_args if k not in known]
    if unknown:
        raise ValueError(f"{path}: its model has field(s) {', '.join(unknown)} that this model.py's GPTConfig lacks "
                         f"(a checkpoint of another version of the code)")
    args = {}
    for key, value in model_args.items():
        default = known[key].default
        try:
            args[key] = check(key, value, None if default is MISSING else default, known[key].type)
        except (ConfigError, TypeError) as e:
            raise ValueError(f"{path}: its model_args: {e}") from None
    try:
        return GPTConfig.from_keys(**args)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: its model_args: {e}") from None


def model_from_checkpoint(checkpoint, path, construct=None):
    """The GPT (on the CPU, in eval mode) that a train.py checkpoint read from path holds, every weight in place
    (restore, with construct for paper 2's constructions): checkpoint is load_checkpoint(path, keys=('model',
    'model_args', 'config'), trained_only=True). The caller's random state is left as it was. Raises ValueError
    naming path (restore)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(checkpoint['config'].get('seed', 1337))
        model = GPT(gpt_config(checkpoint['model_args'], path))
    restore(model, checkpoint, path, construct)
    return model.eval()


# ----------------------------------------------------------------------------- resuming


def run_keys(cfg):
    """The keys of a config that fix its run's task and model ('task' first): TASK_KEYS, the `<task>_*` keys
    of its task, every GPTConfig field (block_size included) and construction. A resumed run may not change
    them; every other key (schedule, intervals, batch and its split, device, dtype, ...) may change."""
    prefix = f"{cfg.get('task')}_"
    return TASK_KEYS + [k for k in cfg if k.startswith(prefix)] + MODEL_KEYS


def shown(value):
    return ','.join(map(str, value)) if isinstance(value, tuple) else str(value)


def resume(out_dir, config, given):
    """The checkpoint out_dir/ckpt.pt, loaded to continue its run, with config (train.py's, a dict) changed in
    place to continue the checkpoint's: every key that the command line (config files and flags; given maps each
    key it set to 'flag' or its file) leaves alone takes the checkpoint's value, except init_from, out_dir and
    overwrite. Raises ValueError, one line (naming what is there instead, with advice that deletes nothing), when
    there is no readable checkpoint, a run key (run_keys) is given a value other than the checkpoint's, max_iters
    is before the checkpoint's iteration, or the checkpoint is not the run in out_dir (check_same_run)."""
    path, best = run_paths(out_dir)
    if os.path.islink(path) and not os.path.exists(path):
        raise ValueError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist: restore the "
                         f"checkpoint it points to, then resume")
    if os.path.isdir(path):
        raise ValueError(f"{path} is a folder, not a checkpoint: move it out of the way and put the run's ckpt.pt "
                         f"there to resume")
    if not os.path.isfile(path):
        held = [n for n in RUN_FILES[1:] if os.path.isfile(os.path.join(out_dir, n))]
        raise ValueError(f"init_from='resume' but there is no checkpoint at {path}" + (
            f" ({out_dir} holds {', '.join(held)}: nothing to resume from; train on from the best weights in a new "
            f"run with --init_from={best} --out_dir=<another folder>)" if 'ckpt_best.pt' in held else
            f" ({out_dir} holds only {', '.join(held)}, of a run stopped before its first checkpoint: start a new "
            f"run with --out_dir=<another folder>, which keeps them)" if held else ''))
    checkpoint = load_checkpoint(path, keys=('model', 'model_args', 'optimizer', 'scaler', 'iter_num',
                                             'best_val_loss', 'config', 'data_rng', 'torch_rng'), trained_only=True)
    saved = checkpoint['config']
    if not isinstance(saved, dict):
        raise ValueError(f"{path}: its config is not a dict of train.py's keys")
    saved = checkpoint['config'] = saved_with_current_names(saved, config)
    for key in [k for k in saved if k in config and config[k] is not None and k not in given]:
        try:                                          # the saved config passes a config file's checks
            saved[key] = check(key, saved[key], config[key])
        except ConfigError as e:
            raise ValueError(f"{path}: its saved config: {e}") from None
    for key in [k for k in run_keys(saved) if k in given] + [k for k in saved if k not in given]:
        if key not in saved or key not in config or key in ('init_from', 'out_dir', 'overwrite'):
            continue                                  # a key of an older or newer train.py: nothing to compare
        if key in given and config[key] != saved[key]:
            source = f"--{key}={shown(config[key])}" if given[key] == 'flag' else \
                f"{key}={shown(config[key])} (in {given[key]})"
            raise ValueError(f"{source} contradicts the checkpoint in {out_dir} ({key}={shown(saved[key])})")
        config[key] = saved[key]
    if config['max_iters'] < checkpoint['iter_num']:
        raise ValueError(f"--max_iters={config['max_iters']} is before the checkpoint in {out_dir} "
                         f"(iteration {checkpoint['iter_num']})")
    check_same_run(out_dir, checkpoint, config)
    checkpoint['best_val_loss'] = best_so_far(out_dir, checkpoint.get('run'))
    return checkpoint


def identity(config, checkpoint=None):
    """What a run is, kept in each of its checkpoints (and its id in each of its log records) so that resuming can
    tell that it continues the run whose logs are in out_dir, on the same data: {'run': an id, 'data':
    data_fingerprint(config)}. The id is a hash of the config the run started with (out_dir and overwrite aside:
    the same settings are the same run); a resumed run keeps its checkpoint's."""
    started = {k: v for k, v in config.items() if k not in ('out_dir', 'overwrite')}
    run = (checkpoint or {}).get('run') or \
        hashlib.sha256(json.dumps(started, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return dict(run=run, data=data_fingerprint(config))


def data_fingerprint(config):
    """The 'recipe' (tokenizer, vocabulary, the inputs' SHA-256, ...) and 'splits' (token counts) of the prepared
    data that config's task reads (its `<task>_data_dir`'s meta.json, text_data.prepare); None for a task that
    makes its own data, or data that cannot be read (the task then says why)."""
    key = f"{config.get('task')}_data_dir"
    if not isinstance(config.get(key), str):
        return None
    try:
        with open(os.path.join(text_data.data_path(config[key]), 'meta.json')) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    return {k: meta.get(k) for k in ('recipe', 'splits')} if isinstance(meta, dict) else None


def log_records(path):
    """(line, record) for every line of the log at path that holds a JSON object (a line cut short by a kill, or
    not JSON, is passed over); nothing when there is no file."""
    if not os.path.isfile(path):
        return
    with open(path) as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield line, record


def log_runs(path):
    """The run ids that the records of the log at path name (an older train.py's records name none)."""
    return {record['run'] for _, record in log_records(path) if isinstance(record.get('run'), str)}


def check_same_run(out_dir, checkpoint, config):
    """Raise ValueError, one line, when resuming checkpoint (out_dir/ckpt.pt) would not continue faithfully: the
    logs in out_dir hold records of another run (a ckpt.pt copied in from elsewhere would continue its own run
    and cut theirs), or the prepared data it trained on has changed since (another text, tokenizer or split)."""
    path, run = run_paths(out_dir)[0], checkpoint.get('run')
    for name in RUN_FILES[2:]:
        others = sorted(log_runs(os.path.join(out_dir, name)) - {run}) if run else []
        if others:
            raise ValueError(f"{path} is of run {run}, but {os.path.join(out_dir, name)} holds records of run "
                             f"{others[0]}: resuming would continue the checkpoint's run and cut that log; put the "
                             f"checkpoint in its own run's out_dir (or a new one)")
    saved, now = checkpoint.get('data'), data_fingerprint(config)
    if saved and now and saved != now:
        recipe = [k for k in sorted(set(saved.get('recipe') or {}) | set(now.get('recipe') or {}))
                  if (saved.get('recipe') or {}).get(k) != (now.get('recipe') or {}).get(k)]
        differ = recipe + (['token counts'] if saved.get('splits') != now.get('splits') else [])
        data_dir = config[f"{config['task']}_data_dir"]
        raise ValueError(f"the data in {data_dir} changed since {path} was saved ({', '.join(differ)} differ): the "
                         f"run cannot go on faithfully on it; prepare the data it was trained on again, or start a "
                         f"new run in another out_dir")


def best_so_far(out_dir, run=None):
    """The val_loss that a resumed run's evaluations must beat to replace out_dir/ckpt_best.pt: the one recorded in
    ckpt_best.pt itself, not ckpt.pt's best_val_loss, which is older when the run stopped between writing the two
    (a kill, a full disk, an out-of-memory) and would let worse weights replace the best. inf when there is no
    ckpt_best.pt, or (with a note) one that cannot be read: the next evaluation writes one. Raises ValueError when
    ckpt_best.pt is of another run than run (ckpt.pt's id), which this run must not replace."""
    last, path = run_paths(out_dir)
    if not os.path.lexists(path):
        return float('inf')
    try:
        best = load_checkpoint(path, keys=('val_loss',), mmap=True)
        val_loss = float(best['val_loss'])
    except (ValueError, TypeError) as e:
        print(f"note: {e}; the next evaluation replaces it", file=sys.stderr)
        return float('inf')
    if run and best.get('run') and best['run'] != run:
        raise ValueError(f"{path} is of run {best['run']}, not of run {run} as {last}: "
                         f"resuming would replace another run's best weights; put the checkpoint in its own run's "
                         f"out_dir (or a new one)")
    return val_loss


def check_new_run(out_dir, overwrite):
    """A new run (not resumed) into out_dir: raise ValueError, naming the files, when out_dir holds a run
    (RUN_FILES) and overwrite is False."""
    held = [n for n in RUN_FILES if os.path.lexists(os.path.join(out_dir, n))] if os.path.isdir(out_dir) else []
    if held and not overwrite:
        raise ValueError(f"{out_dir} holds a run ({', '.join(held)}): start this one in --out_dir=<another folder>, "
                         f"or continue that one with --init_from=resume; --overwrite=True would delete it "
                         f"({', '.join(held)})")


def same_model(checkpoint, model_args, out_dir):
    """checkpoint's model_args, after checking that the task gives the same value for every key both have (the
    same keys give the same shape unless the data changed: a vocabulary, a sequence length). Raises ValueError."""
    for key, value in checkpoint['model_args'].items():
        if key in model_args and model_args[key] != value:
            raise ValueError(f"{out_dir}: the task now gives {key}={model_args[key]} but the checkpoint has "
                             f"{key}={value} (has its data changed?)")
    return checkpoint['model_args']


def restore_training_state(checkpoint, path, optimizer, scaler):
    """Load checkpoint's optimizer and GradScaler states and torch's RNG state, and return its data state (the
    training stream's RNG state, the examples gone through). Raises ValueError naming path when they do not fit."""
    try:
        optimizer.load_state_dict(checkpoint['optimizer'])
        scaler.load_state_dict(checkpoint['scaler'])
        torch.set_rng_state(checkpoint['torch_rng'])
        return checkpoint['data_rng'], checkpoint.get('data_start', 0)
    except (ValueError, KeyError, TypeError, RuntimeError) as e:
        raise ValueError(f"{path}: its optimizer or random state does not fit this run ({type(e).__name__}: "
                         f"{(str(e).splitlines() or [''])[0][:100]})") from None


def start_logs(out_dir, resumed_at=None, evaluates_then=False):
    """A new run (resumed_at None) removes every file of an old one from out_dir; a run resumed at iteration
    resumed_at cuts its logs back to it (log.jsonl to the iteration before, when the loop evaluates at
    resumed_at again: its record is written anew)."""
    if resumed_at is None:
        for name in RUN_FILES + tuple(n + '.tmp' for n in RUN_FILES):
            if os.path.isfile(os.path.join(out_dir, name)):
                os.remove(os.path.join(out_dir, name))
        return
    cut_log(os.path.join(out_dir, 'log.jsonl'), resumed_at - 1 if evaluates_then else resumed_at)
    cut_log(os.path.join(out_dir, 'train_log.jsonl'), resumed_at)


# ----------------------------------------------------------------------------- writing


def write_atomically(path, write):
    """write(f) into path atomically (files.replace_atomically: a kill at any moment leaves either the old file or
    the new one). A failed write (a full disk, a file-size limit, a folder made read-only) keeps the old file and
    fail()s naming the path and the cause."""
    try:
        replace_atomically(path, write)
    except (OSError, RuntimeError) as e:     # torch.save reports a short write as RuntimeError
        fail(f"cannot write {path}: {write_error(e)}; {os.path.basename(path)} is as before")


def write_error(e):
    """What went wrong in a failed write, in words: files.cause for an OSError with an errno, else the error's one
    line (torch's short write) and a hint."""
    if isinstance(e, OSError) and e.errno:
        return cause(e)
    return str(e).strip().splitlines()[-1][:200] + ' (a full disk?)'


def save(path, model, trained_only=False, **state):
    """Write state and model's weights (under 'model') to path atomically (write_atomically): from the
    uncompiled, unwrapped model, so no '_orig_mod.' prefix. trained_only: only the trained weights, and under
    'frozen' the others' fingerprints (a mostly frozen model, paper 2's or the random transformer, then fits in
    a few MB; restore rebuilds them). Under 'sha256' the SHA-256 of every tensor saved (tensors_sha256). Weights
    that are not all finite (a run that diverged) are never written: the run ends (exit status FAULT) naming the
    iteration that path holds."""
    diverged = [name for name, p in model.named_parameters() if not torch.isfinite(p).all()]
    if diverged:
        fail(f"the weights are not finite at iteration {state.get('iter_num')} ({diverged[0]}): the run diverged "
             f"(lower --learning_rate=<lr>, or set --grad_clip=1.0); {path} is not written with them; "
             f"{last_checkpoint(path)}", status=FAULT)
    weights = model.state_dict()
    hashes = frozen_fingerprint(model) if trained_only else {}    # {}: nothing is frozen, keep all
    if hashes:
        state.update(model={k: v for k, v in weights.items() if k not in hashes}, frozen=hashes)
    else:
        state.update(model=weights)
    state['sha256'] = tensors_sha256(state)        # checked when loaded: a flipped byte is not a silent weight
    write_atomically(path, lambda f: torch.save(state, f))


def append_jsonl(path, record):
    """Append record as one JSON line to path, flushed; fail() naming the file and the cause when it cannot be
    written."""
    try:
        with open(path, 'a') as f:
            f.write(json.dumps(record) + '\n')
            f.flush()
    except OSError as e:
        fail(f"cannot write {path}: {write_error(e)}")


def cut_log(path, last_iter):
    """Keep only the records of the log at path with iter <= last_iter (and drop a line cut short by a kill, and
    the record of a stop by a signal), so that a resumed run's records follow its checkpoint's without repeating
    an iteration."""
    if not os.path.isfile(path):
        return
    kept = [line if line.endswith('\n') else line + '\n' for line, record in log_records(path)
            if isinstance(record.get('iter'), int) and record['iter'] <= last_iter
            and 'stopped' not in record]               # a run that was stopped and goes on
    write_atomically(path, lambda f: f.write(''.join(kept).encode()))
