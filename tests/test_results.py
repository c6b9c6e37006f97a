"""results/paper1/tables.py regenerates docs/paper1.md's CPU tables from the committed runs: every run folder
has its log and command, and the tables print every run's final record."""

import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
RESULTS = os.path.join(ROOT, 'results', 'paper1')
sys.path.insert(0, RESULTS)

import sweeps  # noqa: E402
import tables  # noqa: E402


def run_dirs():
    """The task runs (tables.py's); the sweep runs are sweeps.py's, authors/ fetches the authors' code, paper/
    holds the paper-size runs (results/gpu/paper.sh)."""
    return sorted(d for d in os.listdir(RESULTS) if os.path.isdir(os.path.join(RESULTS, d)) and
                  not d.startswith(('.', '__')) and d not in ('authors', 'paper') and sweeps.parse_name(d) is None)


def sweep_dirs():
    return sorted(d for d in os.listdir(RESULTS) if sweeps.parse_name(d) is not None)


def test_every_run_has_a_log_and_its_command():
    dirs = run_dirs()
    assert dirs, "no runs under results/paper1"
    for d in dirs:
        assert tables.parse_name(d) is not None, f"{d}: not <task>_<variant>[_<detail>]"
        log = os.path.join(RESULTS, d, 'log.jsonl')
        records = [json.loads(line) for line in open(log) if line.strip()]
        assert records and 'val_acc' in records[-1], d
        command = open(os.path.join(RESULTS, d, 'command.sh')).read()
        assert 'python train.py' in command, d
        config = [w for w in command.split() if w.startswith('config/')]
        assert config and os.path.isfile(os.path.join(ROOT, config[0])), f"{d}: its command names no config here"


def test_tables_print_every_run():
    out = subprocess.run([sys.executable, os.path.join(RESULTS, 'tables.py')], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    for d in run_dirs():
        row = [line for line in out.splitlines() if line.startswith(f'| {d} |')]
        assert len(row) == 1, f"{d} is not printed once"
        final = [json.loads(line) for line in open(os.path.join(RESULTS, d, 'log.jsonl')) if line.strip()][-1]
        assert f"| {final['iter']} |" in row[0], f"{d}: the row is not the final record's"
        assert f"{100 * final['val_acc']:.2f}" in row[0], f"{d}: the row does not show the final accuracy"


def test_one_task_only():
    out = subprocess.run([sys.executable, os.path.join(RESULTS, 'tables.py'), 'dyck1'], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert '### Dyck-1' in out and '### k-hop' not in out


def test_every_sweep_run_has_its_log_and_the_command_sweeps_py_gives():
    """Each sweep run's folder holds the log of the command sweeps.py lists for it; the sweep's table prints
    its final accuracy (or covariance) in the column of its value."""
    dirs = sweep_dirs()
    out = subprocess.run([sys.executable, os.path.join(RESULTS, 'sweeps.py'), 'table'], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    for d in dirs:
        sweep, name, value = sweeps.parse_name(d)
        (config, flags), = [(c, f) for run, c, f in sweeps.SWEEPS[sweep][1] if run == d]
        command = open(os.path.join(RESULTS, d, 'command.sh')).read()
        assert command.splitlines()[0] == sweeps.command(d, config, flags), d
        final = sweeps.read_run(d)
        lines = out.splitlines()
        (start,) = [i for i, line in enumerate(lines) if line.startswith(f'| {sweep} |')]
        table = lines[start:lines.index('', start) if '' in lines[start:] else len(lines)]
        header = [c.strip() for c in table[0].split('|')[1:-1]]
        (row,) = [line for line in table if line.startswith(f'| {name} |')]
        column = header.index(f'{sweeps.SWEEPS[sweep][0]} = {value}')
        cells = [c.strip() for c in row.split('|')[1:-1]]
        assert cells[column] == f"{sweeps.metric(sweep, final):.{3 if sweep == 'lm' else 2}f}", d


def test_dyck1_breakdown_by_kind_of_string():
    """breakdown.dyck1_kinds sorts the scored strings into balanced, equal counts with a prefix below 0, and
    unequal counts, each with its accuracy."""
    import numpy as np
    import breakdown
    from tasks import CLOSE, OPEN, PAD, QUERY
    strings = ['()', '(())', ')(', '())(', '((', '(()']
    T = 6
    x = np.full((len(strings), T), PAD)
    y = np.full((len(strings), T), -1)
    for i, s in enumerate(strings):
        x[i, :len(s)] = [OPEN if c == '(' else CLOSE for c in s]
        x[i, len(s)] = QUERY
        y[i, len(s)] = CLOSE if i < 2 else OPEN
    pred = y.copy()
    pred[0, 2] = OPEN                                   # one balanced string and one unequal-count string wrong
    pred[5, 3] = CLOSE
    rows = breakdown.dyck1_kinds(pred, x, y)
    assert [(r['kind'], r['strings'], r['acc']) for r in rows] == [
        ('balanced', 2, 0.5), ('equal counts, a prefix below 0', 2, 1.0), ('unequal counts', 2, 0.5)]
