"""
Paper 2's experiments (§5): train only E and U of a fixed universal transformer (universal.py's constructions).

Each run is one `python train.py config/[cpu/]universal_<task>.py --key=value ...` (train.py's loop,
AdamW, fresh samples every step, the task's fixed test set). Three models of one shape:
  sparse  R_Q, R_K, R_V from the sparse construction, written at init (train.py --construction=sparse);
          E, U (and the k-hop position embedding) start at N(0, 0.02) and are the only trained parameters;
  random  R_Q, R_K, R_V (and a frozen MLP) at PyTorch's default U(-1/√fan_in, 1/√fan_in); E, U trained;
  full    the same architecture with every parameter trained.
and five architectures (Table 2's rows, read as cumulative: the MLP rows keep the residual stream).
A run's log.jsonl and the command.sh that made it are kept in results/paper2/<run>/ (train.py's checkpoint
stays in out/); the tables and plots are rebuilt from those logs (load_results, `table`).

    python -m experiments.paper2 run --which=table1 --size=cpu     # table1 | table2 | msweep
    python -m experiments.paper2 table --which=table1              # from results/paper2/*/log.jsonl

`python universal.py experiments ...` and `python universal.py table ...` (the names in results' command.sh
files) run the same commands.
"""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from checkpoint import run_paths
from configurator import fail, run_command, train_keys
from files import output_folder
from universal import FIXED, M_all, m_bar, min_width

ARCHS = {'attn': {}, 'res': dict(residual=True), 'res_ln': dict(residual=True, norm='layer'),
         'mlp': dict(residual=True, mlp=True), 'mlp_ln': dict(residual=True, mlp=True, norm='layer')}
ARCH_NAMES = {'attn': 'Attention-only', 'res': '+ residual', 'res_ln': '+ residual and LN', 'mlp': '+ MLP',
              'mlp_ln': '+ MLP and LN'}
MODELS = ('sparse', 'random', 'full')
IDENTITY = 'sparse_identity'   # the identity reading of the sparse construction, run only when asked (--models)
TASKS = ('dyck1', 'khop1', 'khop2', 'khop3', 'khop4')
D_IN = dict(dyck1=4, khop1=30, khop2=30, khop3=30, khop4=30)   # each task's vocabulary: the target's d_in
D_LIST = (2, 4, 8)      # Fig. 2's head widths d
TABLE_TASKS = dict(table1=TASKS, table2=('dyck1', 'khop2'))   # each table's own rows (App. F adds khop1, 3, 4)
UNFROZEN = dict(freeze_attn=False, freeze_norm=False, freeze_mlp=False)
FULL_LR_SCALE = {  # the fully trained model's lr / the config's, by size, task (deviations.md#universal-experiments)
    'cpu': dict(dyck1=0.3, khop1=0.1, khop2=0.1, khop3=0.1, khop4=0.1), 'paper': dict.fromkeys(TASKS, 1.0)}
PAPER_TABLE1 = {  # paper 2, Table 1 (a) attention-only, (b) + residual and LN: (sparse, random, full) in %
    'attn': dict(dyck1=(100.0, 94.4, 100.0), khop1=(30.2, 29.4, 8.4), khop2=(33.2, 30.5, 51.8),
                 khop3=(39.2, 32.6, 99.5), khop4=(39.4, 35.2, 95.6)),
    'res_ln': dict(dyck1=(100.0, 100.0, 93.0), khop1=(100.0, 96.1, 100.0), khop2=(100.0, 85.7, 100.0),
                   khop3=(100.0, 92.6, 100.0), khop4=(100.0, 89.2, 100.0))}
PAPER_TABLE2 = {  # paper 2, Table 2 (dyck1, khop2) and App. F, Tables 3-4 (khop1, khop3, khop4); other rows: Table 1
    'dyck1': dict(res=(100, 95.4, 100), mlp=(100, 100, 100), mlp_ln=(100, 100, 94.4)),
    'khop1': dict(res=(42.1, 5.5, 67.5), mlp=(61.0, 51.3, 100), mlp_ln=(100, 96.0, 100)),
    'khop2': dict(res=(53.8, 54.3, 58.4), mlp=(54.6, 54.1, 100), mlp_ln=(100, 66.2, 100)),
    'khop3': dict(res=(53.6, 43.9, 99.9), mlp=(56.9, 57.5, 100), mlp_ln=(100, 98.7, 100)),
    'khop4': dict(res=(43.9, 41.6, 97.9), mlp=(44.7, 48.8, 97.4), mlp_ln=(82.8, 70.9, 100))}


def read_log(path):
    """The records of a log.jsonl; the last is the run's result."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


RUNNING = set()   # the train.py processes of run_one under way
STOPPED = []      # the names of the signals that asked experiments to stop


def stop_runs(signum, frame):
    """SIGINT / SIGTERM handler of experiments: pass the signal on to every train.py run under way (each saves
    ckpt.pt after its step and exits; run_one then reports it as failed) and start no more runs."""
    STOPPED.append(signal.Signals(signum).name)
    for p in list(RUNNING):
        p.send_signal(signum)


def same_run(path, command):
    """Whether the command.sh at path holds command (one line of `OMP_NUM_THREADS=n python train.py ...`), its
    thread count and --out_dir aside."""
    if not os.path.isfile(path):
        return False
    drop = lambda line: [a for a in shlex.split(line) if not a.startswith(('--out_dir=', 'OMP_NUM_THREADS='))]
    with open(path) as f:
        return drop(f.read()) == drop(command)


def run_one(config, model, arch, name, extra=(), out='out/universal/cpu', results='results/paper2', start=True):
    """One train.py run, out_dir out/<name>; its log.jsonl (plus a last record with the run's CPU seconds) and
    command.sh go to results/<name>/ (the command also to out/<name>/ as the run starts). Returns that last
    record. Reuses a finished run whose command.sh is this command; continues a stopped one of this command
    from its checkpoint (train.py --init_from=resume, exact), its CPU seconds so far kept in out/<name>/cpu_s.txt;
    otherwise starts afresh (--overwrite=True). Commands are compared with their --out_dir aside (same_run): a
    run whose out dir was moved, or carried to another machine's, is the same run; so is one made with another
    thread count (OMP_NUM_THREADS, 1 unless set, recorded in the command). With start=False returns None
    rather than start or continue a run. model in MODELS, arch in ARCHS. Raises RuntimeError when train.py fails
    (see out/<name>/stdout.txt) or is stopped by a signal."""
    flags = dict(ARCHS[arch], **(UNFROZEN if model == 'full' else {}))
    flags.update(construction=model) if model in FIXED else None
    out_dir, res_dir = os.path.join(out, name), os.path.join(results, name)
    args = ([config] + [f'--{k}={v}' for k, v in flags.items()] + list(extra) +
            [f'--out_dir={out_dir}', '--overwrite=True'])
    threads = os.environ.get('OMP_NUM_THREADS', '1')
    command = f'OMP_NUM_THREADS={shlex.quote(threads)} ' + shlex.join(['python', 'train.py'] + args) + '\n'
    max_iters = train_keys(args, max_iters=5000)['max_iters']
    log_path, cmd_path = os.path.join(res_dir, 'log.jsonl'), os.path.join(res_dir, 'command.sh')
    if os.path.isfile(log_path) and same_run(cmd_path, command):
        last = read_log(log_path)[-1]
        if last['iter'] == max_iters:
            return last
    if not start:
        return None
    out_cmd, cpu_path = (os.path.join(out_dir, f) for f in ('command.sh', 'cpu_s.txt'))
    ckpt, _ = run_paths(out_dir)
    resume = os.path.isfile(ckpt) and same_run(out_cmd, command)
    cpu_before = float(open(cpu_path).read()) if resume and os.path.isfile(cpu_path) else 0.0
    run_args = [a if a != '--overwrite=True' else '--init_from=resume' for a in args] if resume else args
    os.makedirs(out_dir, exist_ok=True)
    if not resume and os.path.isfile(cpu_path):
        os.remove(cpu_path)
    with open(out_cmd, 'w') as f:                            # beside the log as it grows, should the run stop
        f.write(command)
    env = dict(os.environ, OMP_NUM_THREADS=threads)
    with open(os.path.join(out_dir, 'stdout.txt'), 'a' if resume else 'w') as f:
        p = subprocess.Popen([sys.executable, 'train.py'] + run_args, stdout=f, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)         # signals reach it through the driver alone, once
        RUNNING.add(p)
        _, status, usage = os.wait4(p.pid, 0)                # this child's own CPU time, whatever runs beside it
        RUNNING.discard(p)
    cpu_s = round(cpu_before + usage.ru_utime + usage.ru_stime, 1)
    if os.waitstatus_to_exitcode(status):
        if os.path.isfile(ckpt):                             # stopped with a checkpoint: the next call continues it
            with open(cpu_path, 'w') as f:
                f.write(f'{cpu_s}\n')
        raise RuntimeError(f"train.py failed ({os.waitstatus_to_exitcode(status)}), see {out_dir}/stdout.txt")
    records = read_log(os.path.join(out_dir, 'log.jsonl'))
    records.append(dict(records[-1], cpu_s=cpu_s))
    os.makedirs(res_dir, exist_ok=True)
    with open(log_path, 'w') as f:
        f.writelines(json.dumps(r) + '\n' for r in records)
    with open(cmd_path, 'w') as f:
        f.write(command)
    return records[-1]


def experiment_runs(which, size, seeds, d_list=D_LIST, sweep_arch='res_ln', tasks=None, archs=None, flags=(),
                    tag='', full_lr_scale=0.0, models=None):
    """(name, config, model, arch, extra, tag) of every run of an experiment: 'table1', 'table2' or 'msweep' (the
    m sweep uses architecture sweep_arch: the paper does not say which). tasks, archs: only these rows (default:
    the experiment's); models: only these of MODELS and IDENTITY. Names: <task>_<arch>_<model>_seed<k>, and
    khop2_<arch>_d<d>_m<m>_<model>_seed<k> in the sweep; flags (more train.py flags) go with a
    tag that ends the names (_<tag>). The fully trained model runs at full_lr_scale × the config's learning rate
    (--learning_rate in its command; 0: FULL_LR_SCALE[size][task]); a sparse model runs at its construction's
    width (--n_embd=min_width) where the config's n_embd is below it. Raises ValueError for another experiment,
    size, task, architecture or model, a negative seed, a flag that is not one (--key=value), a tag that is not
    a plain name, or full_lr_scale outside [0, 100]."""
    if size not in ('cpu', 'paper'):
        raise ValueError(f"size must be cpu or paper, got {size!r}")
    if sweep_arch not in ARCHS or not set(archs or ()) <= set(ARCHS) or not set(tasks or ()) <= set(TASKS):
        raise ValueError(f"archs and sweep_arch must be in {', '.join(ARCHS)}; tasks in {', '.join(TASKS)}")
    if not set(models or ()) <= set(MODELS + (IDENTITY,)):
        raise ValueError(f"models must be in {', '.join(MODELS + (IDENTITY,))}, got {', '.join(models)}")
    if not seeds or min(seeds) < 0:
        raise ValueError(f"seeds must be >= 0, got {', '.join(map(str, seeds)) or 'none'}")
    if any(not str(f).startswith('--') or len(str(f)) < 3 for f in flags):
        raise ValueError(f"flags must be train.py flags (--key=value), got {', '.join(map(str, flags))}")
    if not re.fullmatch(r'[\w.+-]*', tag):
        raise ValueError(f"tag must be letters, digits, _ . + or - (it ends run names), got {tag!r}")
    if not 0 <= full_lr_scale <= 100:
        raise ValueError(f"full_lr_scale must be in [0, 100] (0: FULL_LR_SCALE's), got {full_lr_scale}")
    cfg_dir = 'config/cpu' if size == 'cpu' else 'config'
    conf = lambda t: f'{cfg_dir}/universal_{t}.py'
    config_lr = lambda t: train_keys([conf(t)], learning_rate=0.0)['learning_rate']
    scale = lambda t: full_lr_scale or FULL_LR_SCALE[size][t]
    lr = lambda t, model: ([f"--learning_rate={scale(t) * config_lr(t):g}"]
                           if model == 'full' and scale(t) != 1 else [])
    name = lambda stem, model, s: f'{stem}_{model}_seed{s}' + (f'_{tag}' if tag else '')

    def width(t, model, d=None, m=None):                     # [--n_embd=...] where the construction needs more
        c = train_keys([conf(t)], n_head=0, n_layer=0, head_dim=0, n_embd=0)
        d, m = d or c['head_dim'], m or c['n_embd']
        need = min_width(model, c['n_head'], c['n_layer'], D_IN[t], d) if model in FIXED else 0
        return [f'--n_embd={need}'] if need > m else []

    runs, chosen = [], [m for m in MODELS + (IDENTITY,) if m in (models or MODELS)]      # in that order
    if which in ('table1', 'table2'):
        tasks_, archs_ = TABLE_TASKS[which], (('attn', 'res_ln') if which == 'table1' else tuple(ARCHS))
        for t in tasks or tasks_:
            for arch in archs or archs_:
                for model in chosen:
                    for s in seeds:
                        runs.append((name(f'{t}_{arch}', model, s), conf(t), model, arch,
                                     [f'--seed={s}', *lr(t, model), *width(t, model), *flags], dict(task=t)))
    elif which == 'msweep':                                  # Fig. 2: 2-hop, m = m̄(d) vs m = H·d
        cfg = train_keys([conf('khop2')], n_head=0, n_layer=0, head_dim=0, n_embd=0)
        H, L = cfg['n_head'], cfg['n_layer']
        for d in d_list:
            for param, m_param in (('mbar', m_bar(H, L, D_IN['khop2'], d)), ('Hd', H * d)):
                for model in chosen:
                    m = m_param
                    if model in FIXED:                       # a construction runs at its own width, not below
                        if m < M_all(H, L, D_IN['khop2'], d):
                            continue
                        m = max(m, min_width(model, H, L, D_IN['khop2'], d))
                    for s in seeds:
                        own = (d, m) == (cfg['head_dim'], cfg['n_embd'])    # the config's shape: Table 2's run
                        runs.append((name(f'khop2_{sweep_arch}' + ('' if own else f'_d{d}_m{m}'), model, s),
                                     conf('khop2'), model, sweep_arch,
                                     [f'--seed={s}', *lr('khop2', model)] + [f'--head_dim={d}', f'--n_embd={m}'] *
                                     (not own) + list(flags),
                                     dict(param=param, d=d, m=m)))
    else:
        raise ValueError(f"unknown experiment {which!r}: table1 | table2 | msweep")
    if bool(flags) != bool(tag):
        raise ValueError("flags need a tag (and a tag flags): the runs are not the configs' own")
    return runs


def load_results(runs, results='results/paper2'):
    """{name: last log record + the run's fields} for those runs (experiment_runs) whose log is in results/."""
    out = {}
    for name, config, model, arch, extra, tag in runs:
        path = os.path.join(results, name, 'log.jsonl')
        if os.path.isfile(path):
            out[name] = dict(read_log(path)[-1], config=config, model=model, arch=arch, extra=extra, **tag)
    return out


def acc_stats(results, **match):
    """(mean, std over seeds, number of runs) of val_acc in % over the runs whose fields equal match."""
    accs = [100 * r['val_acc'] for r in results.values() if all(r.get(k) == v for k, v in match.items())]
    if not accs:
        return float('nan'), 0.0, 0
    mu = sum(accs) / len(accs)
    return mu, (sum((a - mu) ** 2 for a in accs) / max(len(accs) - 1, 1)) ** 0.5, len(accs)


def fmt_acc(stats):
    """'97.3' for one run, '97.3 ± 0.4' (mean ± std over seeds) for several, '-' for none."""
    mu, sd, n = stats
    return '-' if n == 0 else f"{mu:.1f}" if n == 1 else f"{mu:.1f} ± {sd:.1f}"


def results_table(which, results):
    """Markdown table: ours (sparse / random / full, % test accuracy, mean ± std over seeds) beside the paper's."""
    if which in ('table1', 'table2'):
        lines = ['| task | model | ours: sparse | random | full | paper: sparse | random | full |',
                 '|---|---|---|---|---|---|---|---|']
        keys = sorted({(r['task'], r['arch']) for r in results.values()},
                      key=lambda k: (TASKS.index(k[0]), list(ARCHS).index(k[1])))
        for t, arch in keys:
            ours = [fmt_acc(acc_stats(results, task=t, arch=arch, model=m)) for m in MODELS]
            paper = PAPER_TABLE1.get(arch, {}).get(t) or PAPER_TABLE2.get(t, {}).get(arch) or ('-',) * 3
            lines.append(f"| {t} | {ARCH_NAMES[arch]} | " + ' | '.join([*ours, *map(str, paper)]) + ' |')
    else:
        lines = ['| parametrization | d | m | sparse | random | full |', '|---|---|---|---|---|---|']
        settings = {(r['param'], r['d'], r['m']) for r in results.values()}
        for param, d, m in sorted(settings, key=lambda k: (k[0] != 'mbar', k[1])):
            lines.append(f"| {'m = m̄' if param == 'mbar' else 'm = H·d'} | {d} | {m} | " +
                         ' | '.join(fmt_acc(acc_stats(results, param=param, d=d, model=mo)) for mo in MODELS) + ' |')
    return '\n'.join(lines)


def plot_curves(results, png, results_dir='results/paper2'):
    """Test accuracy against the training step, one panel per (task, architecture), one line per model (mean
    over seeds, the band min-max), from the runs' log.jsonl."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    keys = sorted({(r['task'], r['arch']) for r in results.values()},
                  key=lambda k: (TASKS.index(k[0]), list(ARCHS).index(k[1])))
    cols = min(len(keys), 4)
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.7 * rows), squeeze=False, sharey=True)
    colors = dict(zip(MODELS, ('tab:blue', 'tab:orange', 'tab:green')))
    for ax, (t, arch) in zip(axes.flat, keys):
        for model in MODELS:
            curves = [[r for r in read_log(os.path.join(results_dir, n, 'log.jsonl')) if 'cpu_s' not in r]
                      for n, r in results.items() if (r['task'], r['arch'], r['model']) == (t, arch, model)]
            if curves:
                steps = [r['iter'] for r in curves[0]]
                accs = [[100 * c[i]['val_acc'] for c in curves] for i in range(min(map(len, curves)))]
                ax.plot(steps[:len(accs)], [sum(a) / len(a) for a in accs], color=colors[model],
                        label=f"{model} ({len(curves)})")
                ax.fill_between(steps[:len(accs)], [min(a) for a in accs], [max(a) for a in accs],
                                color=colors[model], alpha=0.2)
        ax.set(title=f"{t}, {ARCH_NAMES[arch]}", xlabel='step')
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel('test accuracy (%)')
    for ax in list(axes.flat)[len(keys):]:
        ax.axis('off')
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def plot_msweep(results, png):
    """Fig. 2: test accuracy against m, (a) m = m̄(d), (b) m = H·d; one line per model, ± std over seeds."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    colors = dict(zip(MODELS, ('tab:blue', 'tab:orange', 'tab:green')))
    for ax, param, title in zip(axes, ('mbar', 'Hd'), ('(a) constructed, m = m̄', '(b) standard, m = H·d')):
        for model in MODELS:
            ms = sorted({r['m'] for r in results.values() if r['param'] == param and r['model'] == model})
            if ms:
                st = [acc_stats(results, param=param, m=m, model=model) for m in ms]
                ax.errorbar(ms, [s[0] for s in st], yerr=[s[1] for s in st], marker='o', capsize=3, label=model,
                            color=colors[model])
        d_of = {r['m']: r['d'] for r in results.values() if r['param'] == param}
        ax.set(xscale='log', xlabel='embedding dimension m (d = head width)', title=title)
        ax.set_xticks(sorted(d_of), [f"{m}\n(d = {d_of[m]})" for m in sorted(d_of)])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
        ax.legend()
    axes[0].set_ylabel('2-hop test accuracy (%)')
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def run(which='table1',      # table1 | table2 | msweep
        size='cpu',          # cpu (config/cpu/) | paper (config/)
        seeds=(0, 1, 2),     # seeds of every model
        tasks=(),            # only these tasks (dyck1, khop1..khop4); (): the experiment's
        archs=(),            # only these architectures (attn, res, res_ln, mlp, mlp_ln); (): the experiment's
        models=(),           # only these (sparse, random, full, sparse_identity); (): the first three
        flags=(),            # more train.py flags for every run, e.g. --pos_emb=False (needs a tag)
        tag='',              # appended to the run names (_<tag>) when flags are given
        full_lr_scale=0.0,   # the fully trained model's lr / the config's; 0: FULL_LR_SCALE's
        jobs=1,              # train.py runs at a time
        d_list=D_LIST,       # msweep: the head widths d
        sweep_arch='res_ln', # msweep: the architecture (a key of ARCHS)
        out='out/universal', # train.py's out_dir: out/<size>/<run>/
        results='',          # logs and commands: results/<run>/; '': results/paper2 (cpu), .../paper
        assets='assets'):    # the folder the curves' PNG goes to
    """Run (or reuse) every train.py run of an experiment (or of its rows tasks × archs), keep its log.jsonl and
    command.sh in results/, then print the table of every run of the experiment found there, beside the paper's
    numbers, and write <assets>/universal_<which>_<size>[_<tag>].png. SIGINT / SIGTERM stop it cleanly: the runs
    under way save their checkpoints and stop, no more start, and it exits 1 naming them."""
    if jobs < 1:
        fail(f"jobs must be >= 1, got {jobs}")
    try:
        runs = experiment_runs(which, size, seeds, d_list, sweep_arch, tasks, archs, flags, tag, full_lr_scale,
                               models=models)
    except ValueError as e:
        fail(e)
    out, results = os.path.join(out, size), results or ('results/paper2' if size == 'cpu' else 'results/paper2/paper')
    try:                                                    # every folder it writes, before any run
        for folder, key in ((out, 'out'), (results, 'results'), (assets, 'assets')):
            output_folder(folder, key)
    except ValueError as e:
        fail(e)

    def go(run):                                            # a failed run is reported; the others go on
        name, config, model, arch, extra, tag = run
        if STOPPED:                                         # a finished run still counts as done
            return None if run_one(config, model, arch, name, extra, out, results, start=False) else name
        try:
            r = run_one(config, model, arch, name, extra, out, results)
        except RuntimeError as e:
            print(f"{name:40s} failed: {e}", flush=True)
            return name
        print(f"{name:40s} val_acc {r['val_acc']:.4f}  val_loss {r['val_loss']:.4f}  cpu {r.get('cpu_s', 0):.0f} s",
              flush=True)

    STOPPED.clear()
    handlers = {signum: signal.signal(signum, stop_runs) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        with ThreadPoolExecutor(jobs) as pool:
            failed = [name for name in pool.map(go, runs) if name]
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    if STOPPED:
        fail(f"stopped by {STOPPED[0]}: {len(failed)} of {len(runs)} runs unfinished or not started "
             f"({', '.join(failed)}); the same command continues the stopped ones from their checkpoints", status=1)
    beyond = set(tasks) - set(TABLE_TASKS.get(which, ()))       # App. F's tasks: their own table
    table(which, size, tuple(dict.fromkeys(seeds + (0, 1, 2, 3, 4))), tasks if beyond else (), (), flags, tag,
          full_lr_scale, tuple(dict.fromkeys(D_LIST + tuple(d_list))), sweep_arch, results, assets)  # every row
    if failed:
        fail(f"{len(failed)} of {len(runs)} runs failed: {', '.join(failed)} (each one's stdout.txt is in {out}/)",
             status=1)


def table(which='table1',            # table1 | table2 | msweep
          size='cpu',                # cpu | paper: the configs the runs used
          seeds=(0, 1, 2, 3, 4),     # the seeds whose logs to look for
          tasks=(),                  # only these tasks; (): the experiment's
          archs=(),                  # only these architectures; (): the experiment's
          flags=(),                  # the runs' extra train.py flags (as given to experiments)
          tag='',                    # and their tag
          full_lr_scale=0.0,         # the fully trained model's lr / the config's; 0: FULL_LR_SCALE's
          d_list=D_LIST,             # msweep: the head widths d
          sweep_arch='res_ln',       # msweep: the architecture
          results='',                # '': results/paper2 (cpu), results/paper2/paper (paper)
          assets='assets'):          # the folder the curves' PNG goes to
    """Print an experiment's table from the logs in results/ (runs without a log are left out) and redraw
    <assets>/universal_<which>_<size>[_<task>...][_<tag>].png (curves for the tables, Fig. 2 for msweep; the tasks
    when only those are asked for)."""
    try:
        runs = experiment_runs(which, size, seeds, d_list, sweep_arch, tasks, archs, flags, tag, full_lr_scale)
        output_folder(assets, 'assets')
    except ValueError as e:
        fail(e)
    results = results or ('results/paper2' if size == 'cpu' else 'results/paper2/paper')
    found = load_results(runs, results)
    cpu = [r['cpu_s'] for r in found.values() if 'cpu_s' in r]
    print(f"{len(found)} of {len(runs)} runs in {results}/, train.py CPU time {sum(cpu):.0f} s")
    if found:
        png = os.path.join(assets, f"universal_{which}_{size}{''.join('_' + t for t in tasks)}"
                                   f"{'_' + tag if tag else ''}.png")
        (plot_msweep if which == 'msweep' else lambda r, p: plot_curves(r, p, results))(found, png)
        print(f"wrote {png}")
        print(results_table(which, found))


def main(argv=None):
    """Run one of the commands (`python -m experiments.paper2 CMD ...`)."""
    return run_command(dict(run=run, table=table), argv, doc=__doc__)
