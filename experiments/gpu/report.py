"""
The paper-size runs that experiments/gpu/paper.sh makes, one row each, read from their folders under
results/paper1/paper/ and results/paper2/paper/ (command.sh, log.jsonl, machine.txt, exit_code): how many of
its planned steps the run made, how it ended, its last evaluation and its best, and the GPU it ran on. The
planned steps are the command's (its config files, then its --max_iters); a run that the stage's budget stopped
(exit code 124) reports the evaluation it reached, which is rarely the paper's; one whose stdout.txt has
train.py's closing "final" line made all its steps before the signal came, and is finished.

    python -m experiments.gpu.report                 # every paper-size run, a markdown table per paper
    python -m experiments.gpu.report imdb depth      # the runs whose names start with imdb or depth
    python -m experiments.gpu.report lm --plot=assets/paper1_lm_paper.png   # and their curves, a panel per task
    python -m experiments.gpu.report --pace          # how fast each run stepped, what its planned steps take

The metric is test accuracy (%, higher is better), for memorization accuracy on the pairs it trains on, and for
language modeling validation loss (nats per token, lower is better); memorization adds bits per parameter,
decimal addition the share of whole sums right, Table 6's runs their token covariance (covariance.json).

--pace reads each run's last logged step from its stdout.txt (train.py's `ms/iter` and `MFU` line, and the
peak its MFU is against): the ms a step took, its MFU, the model FLOPs of a step that these give (MFU x peak
x time, as precise as the printed MFU: where it has one decimal, a quarter off at 0.2%), and the time the
planned steps take at that pace and at --mfu of the same peak (default 0.3). A run that shared its GPU with
other runs steps slower than it would alone.
"""

import json
import os
import re
import shlex
import sys

from configurator import ConfigError, fail, train_keys
from experiments.paper1.tables import bits_per_param

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PAPERS = ('paper1', 'paper2')
LINE_STYLES = ('-', '--', ':', '-.')     # looks: a panel's settings (seeds, splits), in the order they come
ENDED = {'0': 'finished', '124': 'stopped by the budget'}


def planned(command):
    """(max_iters, task, variant) that a `python train.py config.py ... --key=value ...` command line gives;
    (None, None, None) for a command that names no train.py or configs that cannot be read here."""
    try:
        words = shlex.split(command)
    except ValueError:                     # an unclosed quote
        return None, None, None
    if 'train.py' not in words:
        return None, None, None
    argv = [a if a.startswith('--') else os.path.join(ROOT, a) for a in words[words.index('train.py') + 1:]]
    try:
        got = train_keys(argv, max_iters=0, task='', variant='')
    except (ConfigError, OSError):
        return None, None, None
    return got['max_iters'] or None, got['task'] or None, got['variant'] or None


def gpu_name(path):
    """The GPU that machine.txt names (nvidia-smi's csv: a header, then name, memory, driver), else its CPU line
    (a rehearsal on a CPU), else None."""
    if not os.path.isfile(path):
        return None
    lines = [line.strip() for line in open(path) if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith('name,') and i + 1 < len(lines):
            return lines[i + 1].split(',')[0].strip()
        if line.startswith('Model name:'):
            return line.split(':', 1)[1].strip()
    return None


def read(folder):
    """One run folder as a dict: name, records (log.jsonl), command, gpu, exit_code (None where the run wrote
    none: paper 2's finished runs), stdout (stdout.txt, '' where there is none; a byte that is not UTF-8, as a
    run killed mid-character leaves, read as U+FFFD), planned steps, task, variant, and covariance.json's numbers
    (None where it has none)."""
    def text(name):
        path = os.path.join(folder, name)
        return open(path, errors='replace').read().strip() if os.path.isfile(path) else None
    log = os.path.join(folder, 'log.jsonl')
    records = []
    for i, line in enumerate(open(log) if os.path.isfile(log) else [], 1):
        try:
            records += [json.loads(line)] if line.strip() else []
        except json.JSONDecodeError as e:
            fail(f"{os.path.relpath(log)}: line {i} is not JSON ({e.msg})")
    command = text('command.sh') or ''
    max_iters, task, variant = planned(command.splitlines()[0] if command else '')
    try:
        covariance = json.loads(text('covariance.json') or 'null')
    except json.JSONDecodeError as e:
        fail(f"{os.path.relpath(os.path.join(folder, 'covariance.json'))}: not JSON ({e.msg})")
    return dict(name=os.path.basename(folder), folder=folder, records=records, command=command,
                exit_code=text('exit_code'), stdout=text('stdout.txt') or '',
                gpu=gpu_name(os.path.join(folder, 'machine.txt')),
                max_iters=max_iters, task=task, variant=variant, covariance=covariance)


def metric(task):
    """(log key, scale, label) of a task's metric: language modeling's validation loss (lower is better), else
    accuracy in % (memorization's on the pairs it trains on)."""
    if task == 'lm':
        return 'val_loss', 1, 'val loss'
    return 'val_acc', 100, 'train acc %' if task == 'memorization' else 'test acc %'


def row(run):
    """The table row of a run: name, steps made / planned, how it ended, metric, last, best (step), more, GPU."""
    recs = run['records']
    last = recs[-1] if recs else {}
    steps = last.get('iter')
    if re.search(r'^final \(', run['stdout'], re.M):   # train.py's closing line: all steps made, whatever came after
        ended = 'finished'
    elif run['exit_code'] is not None:
        ended = ENDED.get(run['exit_code'], f"exit {run['exit_code']}")
    else:                                  # paper 2's finished runs write no exit code
        ended = 'finished' if steps is not None and steps == run['max_iters'] else '—'
    lm = run['task'] == 'lm'
    key, scale, label = metric(run['task'])
    show = (lambda v: f"{v:.3f}") if lm else (lambda v: f"{scale * v:.2f}")
    scored = [r for r in recs if key in r]
    if scored:
        top = (min if lm else max)(scored, key=lambda r: r[key])
        best = f"{show(top[key])} (step {top['iter']:,})"
    else:
        best = '—'
    more = []
    if bits_per_param(last) is not None:
        more.append(f"bits/param {bits_per_param(last):.2f}")
    if 'val_exact' in last:
        more.append(f"whole sums {100 * last['val_exact']:.2f}%")
    if run['covariance']:                  # Table 6 (sde.py covariance), in units of 1e-2 as the paper
        cov = run['covariance']
        more.append(f"covariance (1e-2) {100 * cov['trained']['covariance']:.3f}, at init "
                    f"{100 * cov['init']['covariance']:.3f}")
    made = '—' if steps is None else f"{steps:,}"
    plan = '?' if run['max_iters'] is None else f"{run['max_iters']:,}"
    return [run['name'], f"{made} / {plan}", ended, label,
            show(last[key]) if key in last else '—', best, ', '.join(more) or '—', run['gpu'] or '—']


def pace(run, mfu_at):
    """The --pace row of a run: name, steps made / planned, ms/step and MFU of its last logged step, model FLOPs
    per step (MFU x peak x time), and minutes for its planned steps at that pace and at MFU mfu_at."""
    against = re.search(r'MFU against ([\d.]+) TFLOP/s', run['stdout'])
    steps = re.findall(r'iter ([\d,]+): .*?([\d.]+) ms/iter, [\d,]+ tok/s, MFU ([\d.]+)%', run['stdout'])
    plan = run['max_iters'] or 0
    made = f"{int(steps[-1][0].replace(',', '')):,}" if steps else '—'
    cells = [run['name'], f"{made} / {f'{plan:,}' if plan else '?'}"]
    if not (against and steps):
        return cells + ['—'] * 5
    ms, mfu, peak = float(steps[-1][1]), float(steps[-1][2]) / 100, float(against.group(1)) * 1e12
    flops = mfu * peak * ms / 1e3
    minutes = lambda seconds: f"{seconds / 60:.1f}" if plan else '?'
    return cells + [f"{ms:.1f}", f"{100 * mfu:.3g}%", f"{flops:.1e}", minutes(plan * ms / 1e3),
                    minutes(plan * flops / (mfu_at * peak))]


def pace_table(runs, mfu_at):
    header = ['run', 'steps / planned', 'ms/step (last logged)', 'MFU', 'model FLOP/step', 'planned steps, min',
              f'at {100 * mfu_at:g}% MFU, min']
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    return '\n'.join(lines + ['| ' + ' | '.join(pace(r, mfu_at)) + ' |' for r in runs])


def table(runs):
    header = ['run', 'steps / planned', 'ended', 'metric', 'last', 'best (step)', 'also (last)', 'GPU']
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    return '\n'.join(lines + ['| ' + ' | '.join(row(r)) + ' |' for r in runs])


def runs(prefixes=(), root=os.path.join(ROOT, 'results')):
    """{paper: [run dicts]} of the run folders under root/<paper>/paper/ whose names start with one of prefixes
    (every run when there are none), in name order; papers with no such run are left out."""
    out = {}
    for paper in PAPERS:
        base = os.path.join(root, paper, 'paper')
        names = sorted(os.listdir(base)) if os.path.isdir(base) else []
        chosen = [read(os.path.join(base, n)) for n in names if os.path.isdir(os.path.join(base, n)) and
                  (not prefixes or n.startswith(tuple(prefixes)))]
        if chosen:
            out[paper] = chosen
    return out


def looks(rs):
    """{run name: (matplotlib colour, line style)} for one panel's runs: a run whose name holds its variant as a
    word (`imdb_mixit_2`) has that variant's colour and the line style of the rest of its name (`imdb_2`: its
    seed, split or steps), so that each variant keeps its colour and each setting its style; any other run has a
    colour of its own and a solid line. Colours and styles are handed out in the runs' order."""
    colors, styles, got = {}, {}, {}
    for run in rs:
        name, variant = run['name'], run['variant']
        if variant and f"_{variant}_" in f"_{name}_":
            setting = f"_{name}_".replace(f"_{variant}_", '_', 1)
            style = styles.setdefault(setting, LINE_STYLES[len(styles) % len(LINE_STYLES)])
        else:
            variant, style = name, '-'
        got[name] = (colors.setdefault(variant, f"C{len(colors) % 10}"), style)
    return got


def plot(found, path):
    """The evaluations of the chosen runs against the step, a panel per task (each paper's runs apart), one line
    per run: the metric of the table (test accuracy %, or language modeling's validation loss), written to path
    (a .png), each run in its colour and line style (looks). Returns {(paper, task): [run names]}, the panels in
    order."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    panels = {}
    for paper, rs in found.items():
        for run in rs:
            panels.setdefault((paper, run['task'] or '?'), []).append(run)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, ((paper, task), rs) in zip(axes[0], panels.items()):
        key, scale, label = metric(task)
        trained = []                       # the losses after step 0, whose range the panel shows
        look = looks(rs)
        for run in rs:
            recs = [r for r in run['records'] if key in r]
            color, style = look[run['name']]
            ax.plot([r['iter'] for r in recs], [scale * r[key] for r in recs], marker='o', ms=3, ls=style,
                    color=color, label=run['name'])
            trained += [r[key] for r in recs if task == 'lm' and r['iter'] > 0]
        if trained:                        # the untrained model's ln(vocabulary) would flatten the curves
            span = max(trained) - min(trained)
            ax.set_ylim(min(trained) - 0.1 * span, max(trained) + 0.1 * span)
        ax.set_xlabel('step')
        ax.set_ylabel('val loss (nats per token)' if task == 'lm' else label)
        ax.set_title(f"{paper}: {task}, paper size ({', '.join(sorted({r['gpu'] or '?' for r in rs}))})",
                     fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return {key: [run['name'] for run in rs] for key, rs in panels.items()}


def main(argv):
    if '-h' in argv or '--help' in argv:
        print(__doc__.strip())
        return
    png = [a.split('=', 1)[1] for a in argv if a.startswith('--plot=')]
    at = [a.split('=', 1)[1] for a in argv if a.startswith('--mfu=')]
    show_pace = '--pace' in argv or bool(at)
    prefixes = [a for a in argv if not a.startswith(('--plot=', '--mfu=')) and a != '--pace']
    if any(a.startswith('-') for a in prefixes) or len(png) > 1 or len(at) > 1:
        fail(f"report.py takes run-name prefixes, one --plot=<file>.png, --pace and one --mfu=<fraction>, got "
             f"{' '.join(a for a in argv if a.startswith('-'))}")
    try:
        mfu_at = float(at[0]) if at else 0.3
    except ValueError:
        mfu_at = -1.0
    if not 0 < mfu_at <= 1:
        fail(f"--mfu is a fraction of the peak in (0, 1], got {at[0]!r}")
    if png and not png[0].endswith('.png'):
        fail(f"--plot writes a .png, got {png[0]!r}")
    if png and os.path.dirname(png[0]) and not os.path.isdir(os.path.dirname(png[0])):
        fail(f"--plot: no folder {os.path.dirname(png[0])} for {png[0]}")
    found = runs(prefixes)
    if not found:
        fail("no paper-size run under results/paper1/paper or results/paper2/paper"
             + (f" starts with {', '.join(prefixes)}" if prefixes else ''))
    show = (lambda rs: pace_table(rs, mfu_at)) if show_pace else table
    print('\n\n'.join(f"### {paper}\n\n{show(rs)}" for paper, rs in found.items()))
    if png:
        plot(found, png[0])
        print(f"wrote {png[0]}")


if __name__ == '__main__':
    main(sys.argv[1:])
