"""
The paper-size runs that results/gpu/paper.sh makes, one row each, read from their folders under
results/paper1/paper/ and results/paper2/paper/ (command.sh, log.jsonl, machine.txt, exit_code): how many of
its planned steps the run made, how it ended, its last evaluation and its best, and the GPU it ran on. The
planned steps are the command's (its config files, then its --max_iters); a run that the stage's budget stopped
(exit code 124) reports the evaluation it reached, which is rarely the paper's.

    python results/gpu/report.py                 # every paper-size run, a markdown table per paper
    python results/gpu/report.py imdb depth      # the runs whose names start with imdb or depth

The metric is test accuracy (%, higher is better), for memorization accuracy on the pairs it trains on, and for
language modeling validation loss (nats per token, lower is better); memorization adds bits per parameter,
decimal addition the share of whole sums right.
"""

import json
import os
import shlex
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
sys.path.insert(0, ROOT)

from configurator import ConfigError, fail, train_keys  # noqa: E402

PAPERS = ('paper1', 'paper2')
ENDED = {'0': 'finished', '124': 'stopped by the budget'}


def planned(command):
    """(max_iters, task) that a `python train.py config.py ... --key=value ...` command line gives; (None, None)
    for a command that names no train.py or configs that cannot be read here."""
    try:
        words = shlex.split(command)
    except ValueError:                     # an unclosed quote
        return None, None
    if 'train.py' not in words:
        return None, None
    argv = [a if a.startswith('--') else os.path.join(ROOT, a) for a in words[words.index('train.py') + 1:]]
    try:
        got = train_keys(argv, max_iters=0, task='')
    except (ConfigError, OSError):
        return None, None
    return got['max_iters'] or None, got['task'] or None


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
    none: paper 2's finished runs), planned steps and task."""
    def text(name):
        path = os.path.join(folder, name)
        return open(path).read().strip() if os.path.isfile(path) else None
    log = os.path.join(folder, 'log.jsonl')
    records = []
    for i, line in enumerate(open(log) if os.path.isfile(log) else [], 1):
        try:
            records += [json.loads(line)] if line.strip() else []
        except json.JSONDecodeError as e:
            fail(f"{os.path.relpath(log)}: line {i} is not JSON ({e.msg})")
    command = text('command.sh') or ''
    max_iters, task = planned(command.splitlines()[0] if command else '')
    return dict(name=os.path.basename(folder), records=records, command=command, exit_code=text('exit_code'),
                gpu=gpu_name(os.path.join(folder, 'machine.txt')), max_iters=max_iters, task=task)


def row(run):
    """The table row of a run: name, steps made / planned, how it ended, metric, last, best (step), more, GPU."""
    recs = run['records']
    last = recs[-1] if recs else {}
    steps = last.get('iter')
    if run['exit_code'] is not None:
        ended = ENDED.get(run['exit_code'], f"exit {run['exit_code']}")
    else:                                  # paper 2's finished runs write no exit code
        ended = 'finished' if steps is not None and steps == run['max_iters'] else '—'
    lm = run['task'] == 'lm'
    key, show = ('val_loss', lambda v: f"{v:.3f}") if lm else ('val_acc', lambda v: f"{100 * v:.2f}")
    scored = [r for r in recs if key in r]
    if scored:
        top = (min if lm else max)(scored, key=lambda r: r[key])
        best = f"{show(top[key])} (step {top['iter']:,})"
    else:
        best = '—'
    more = []
    if 'bits_per_param' in last:
        more.append(f"bits/param {last['bits_per_param']:.2f}")
    if 'val_exact' in last:
        more.append(f"whole sums {100 * last['val_exact']:.2f}%")
    made = '—' if steps is None else f"{steps:,}"
    plan = '?' if run['max_iters'] is None else f"{run['max_iters']:,}"
    metric = 'val loss' if lm else 'train acc %' if run['task'] == 'memorization' else 'test acc %'
    return [run['name'], f"{made} / {plan}", ended, metric,
            show(last[key]) if key in last else '—', best, ', '.join(more) or '—', run['gpu'] or '—']


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


def main(argv):
    if '-h' in argv or '--help' in argv:
        print(__doc__.strip())
        return
    if any(a.startswith('-') for a in argv):
        fail(f"report.py takes run-name prefixes only, got {' '.join(a for a in argv if a.startswith('-'))}")
    found = runs(argv)
    if not found:
        fail("no paper-size run under results/paper1/paper or results/paper2/paper"
             + (f" starts with {', '.join(argv)}" if argv else ''))
    print('\n\n'.join(f"### {paper}\n\n{table(rs)}" for paper, rs in found.items()))


if __name__ == '__main__':
    main(sys.argv[1:])
