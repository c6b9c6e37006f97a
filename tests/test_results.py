"""results/paper1/tables.py regenerates docs/paper1.md's CPU tables from the committed runs: every run folder
has its log and command, and the tables print every run's final record."""

import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
RESULTS = os.path.join(ROOT, 'results', 'paper1')
sys.path.insert(0, RESULTS)

import tables  # noqa: E402


def run_dirs():
    return sorted(d for d in os.listdir(RESULTS) if os.path.isdir(os.path.join(RESULTS, d)) and
                  not d.startswith(('.', '__')))


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
