"""experiments/paper1/tables.py regenerates docs/paper1.md's CPU tables from the committed runs: every run folder
has its log and command, and the tables print every run's final record."""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys

import pytest
import torch
from conftest import script_env

from experiments.gpu import report
from experiments.paper1 import sweeps, tables

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
RESULTS = os.path.join(ROOT, 'results', 'paper1')


def run_dirs():
    """The task runs (tables.py's); the sweep runs are sweeps.py's, authors/ holds the runs of the authors' code,
    paper/ the paper-size runs (experiments/gpu/paper.sh)."""
    return sorted(d for d in os.listdir(RESULTS) if os.path.isdir(os.path.join(RESULTS, d)) and
                  not d.startswith(('.', '__')) and d not in ('authors', 'paper') and sweeps.parse_name(d) is None)


def sweep_dirs():
    return sorted(d for d in os.listdir(RESULTS) if sweeps.parse_name(d) is not None)


def test_results_hold_results_and_experiments_the_code():
    """results/ holds what runs made and the commands that made them, no code: a .py or .sh file there is a run's
    command.sh; the drivers are under experiments/."""
    code = [os.path.relpath(os.path.join(d, f), ROOT) for d, _, files in os.walk(os.path.join(ROOT, 'results'))
            for f in files if f.endswith(('.py', '.sh')) and f != 'command.sh']
    assert code == [], code
    assert os.path.isfile(os.path.join(ROOT, 'experiments', 'paper1', 'sweeps.py'))


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
    out = subprocess.run([sys.executable, '-m', 'experiments.paper1.tables'], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    for d in run_dirs():
        row = [line for line in out.splitlines() if line.startswith(f'| {d} |')]
        assert len(row) == 1, f"{d} is not printed once"
        final = [json.loads(line) for line in open(os.path.join(RESULTS, d, 'log.jsonl')) if line.strip()][-1]
        assert f"| {final['iter']} |" in row[0], f"{d}: the row is not the final record's"
        assert f"{100 * final['val_acc']:.2f}" in row[0], f"{d}: the row does not show the final accuracy"


def test_one_task_only():
    out = subprocess.run([sys.executable, '-m', 'experiments.paper1.tables', 'dyck1'], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert '### Dyck-1' in out and '### k-hop' not in out


def test_every_sweep_run_has_its_log_and_the_command_sweeps_py_gives():
    """Each sweep run's folder holds the log of the command sweeps.py lists for it; the sweep's table prints
    its final accuracy (or covariance) in the column of its value."""
    dirs = sweep_dirs()
    out = subprocess.run([sys.executable, '-m', 'experiments.paper1.sweeps', 'table'], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    for d in dirs:
        sweep, name, value = sweeps.parse_name(d)
        (config, flags), = [(c, f) for run, c, f in sweeps.SWEEPS[sweep][1] if run == d]
        command = open(os.path.join(RESULTS, d, 'command.sh')).read().splitlines()[0]
        threads = int(command.split()[0].removeprefix('OMP_NUM_THREADS='))
        assert command == sweeps.command(d, config, flags, threads), d
        final = sweeps.read_run(d)
        lines = out.splitlines()
        (start,) = [i for i, line in enumerate(lines) if line.startswith(f'| {sweep} |')]
        table = lines[start:lines.index('', start) if '' in lines[start:] else len(lines)]
        header = [c.strip() for c in table[0].split('|')[1:-1]]
        (row,) = [line for line in table if line.startswith(f'| {name} |')]
        column = header.index(f'{sweeps.SWEEPS[sweep][0]} = {value}')
        cells = [c.strip() for c in row.split('|')[1:-1]]
        assert cells[column] == f"{sweeps.metric(sweep, final):.{3 if sweep == 'lm' else 2}f}", d


def test_sweep_figure_draws_every_run_once_and_a_settings_seeds_in_one_series():
    """plot()'s panels hold each committed sweep run's number once; facet() puts the seeds of one m_max setting in
    one series, a longer schedule in another series of the same panel and another peak lr in another panel; the
    heads sweep's seeds of one Dyck-1 setting share a series too."""
    drawn = sorted(y for sweep, title, lines, paper in sweeps.panels() for name, runs in lines.items()
                   if not name.endswith(', at init') for ys in runs.values() for y in ys)
    assert drawn == sorted(sweeps.metric(sweeps.parse_name(d)[0], sweeps.read_run(d)) for d in sweep_dirs())
    flags = '--retrieval_m_max=48 --max_iters=3000 --learning_rate=3e-4 --qk_init_std=0.0566'
    seed1, seed2, longer, other_lr = (sweeps.facet('mmax', 'config/cpu/retrieval_standard.py', f)
                                      for f in (flags, flags + ' --seed=2', flags.replace('3000', '6000'),
                                                flags.replace('3e-4', '1e-3')))
    assert seed1[:2] == seed2[:2] and (seed1[2], seed2[2]) == (1, 2)
    assert longer[0] == seed1[0] and longer[1] != seed1[1]
    assert other_lr[0] != seed1[0]
    heads = {name: runs for sweep, _, lines, _ in sweeps.panels() if sweep == 'heads' for name, runs in lines.items()}
    seeds = [d for d in sweep_dirs() if d.startswith('heads_dyck1_mixit_depthscaled_4layers_4500steps')]
    assert len(seeds) > 1 and len(heads['dyck1_mixit_depthscaled_4layers_4500steps'][128]) == len(seeds)


def test_covariance_at_initialisation_shown_once_per_model(monkeypatch, capsys):
    """Two covariance series that differ only in training share their initialised models: the table prints
    their at-init row once, with the depths of both, and the figure draws it once; a series of other models
    keeps its own."""
    def final(trained, init):
        return {'covariance': {'trained': {'covariance': trained}, 'init': {'covariance': init}}}
    finals = {'covariance_mixit_2': final(0.3, 0.15), 'covariance_mixit_4': final(0.4, 0.19),
              'covariance_random_2': final(0.5, 0.06),
              'covariance_mixit_long_4': final(0.2, 0.19), 'covariance_mixit_long_8': final(0.2, 0.35)}
    monkeypatch.setattr(sweeps, 'SWEEPS', {'covariance': ('layers', [(n, 'c.py', '') for n in finals])})
    monkeypatch.setattr(sweeps, 'read_run', finals.get)
    sweeps.table()
    rows = {line.split('|')[1].strip(): [c.strip() for c in line.split('|')[2:-1]]
            for line in capsys.readouterr().out.splitlines() if line.startswith('| ')}
    assert rows['mixit, at init'][:3] == ['15.00', '19.00', '35.00']     # layers 2, 4, 8 (16, 32: the paper's)
    assert rows['random, at init'][:3] == ['6.00', '', '']
    assert [r for r in rows if r.endswith('at init')] == ['mixit, at init', 'random, at init']
    (_, _, lines, _), = sweeps.panels()
    assert sorted(lines) == ['mixit', 'mixit, at init', 'mixit_long', 'random', 'random, at init']
    assert lines['mixit, at init'] == {2: [15.0], 4: [19.0], 8: [35.0]}
    assert sweeps.merge_inits({'a': {2: 1.0}, 'b': {2: 1.1}, 'c': {4: 1.0}}) == {'a': {2: 1.0}, 'b': {2: 1.1},
                                                                                 'c': {4: 1.0}}


def test_dyck1_breakdown_by_kind_of_string():
    """breakdown.dyck1_kinds sorts the scored strings into balanced, equal counts with a prefix below 0, and
    unequal counts, each with its accuracy; dyck1_short_strings gives each distinct short string (here '()'
    twice) its count and accuracy, by length then text."""
    import numpy as np
    from experiments.paper1 import breakdown
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
    short = breakdown.dyck1_short_strings(np.concatenate([pred, pred[:1]]), np.concatenate([x, x[:1]]),
                                          np.concatenate([y, y[:1]]), max_len=3)
    assert short == [dict(string='((', balanced=False, strings=1, acc=1.0),
                     dict(string='()', balanced=True, strings=2, acc=0.0),
                     dict(string=')(', balanced=False, strings=1, acc=1.0),
                     dict(string='(()', balanced=False, strings=1, acc=0.0)]


# the paper-size runs (experiments/gpu/paper.sh), read by experiments/gpu/report.py
def paper_size_runs():
    return [run for rs in report.runs().values() for run in rs]


def test_every_paper_size_run_has_its_command_log_and_gpu():
    """Each folder under results/paper{1,2}/paper/ holds its evaluations, the train.py command (whose configs are
    here) with the steps it planned, the GPU it ran on, and how it ended: exit 0, stopped by the budget (124),
    or, where no exit code was written (paper 2's finished runs), its last evaluation at the planned step."""
    for run in paper_size_runs():
        name = run['name']
        assert run['records'] and 'val_loss' in run['records'][-1], f"{name}: no evaluation in log.jsonl"
        assert run['max_iters'], f"{name}: command.sh gives no steps (train.py and configs found here)"
        assert run['gpu'] and 'NVIDIA' in run['gpu'], f"{name}: machine.txt names no GPU"
        assert run['exit_code'] in ('0', '124') or (run['exit_code'] is None and
                                                     run['records'][-1]['iter'] == run['max_iters']), name
        assert run['records'][-1]['iter'] <= run['max_iters'], name


def test_report_prints_every_paper_size_run():
    out = subprocess.run([sys.executable, '-m', 'experiments.gpu.report'], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    for run in paper_size_runs():
        last = run['records'][-1]
        (row,) = [line for line in out.splitlines() if line.startswith(f"| {run['name']} |")]
        cells = [c.strip() for c in row.split('|')[1:-1]]
        assert cells[1] == f"{last['iter']:,} / {run['max_iters']:,}", run['name']
        assert cells[4] == (f"{last['val_loss']:.3f}" if run['task'] == 'lm' else f"{100 * last['val_acc']:.2f}")


def test_report_reads_how_each_run_ended(tmp_path):
    """A language-model run that finished without an exit code reports its lowest validation loss as the best;
    a run the budget stopped says so, with its steps out of the command's --max_iters, and one whose stdout has
    train.py's closing line had finished before the signal; each draws in its task's panel."""
    def write(name, command, records, exit_code=None, stdout=None):
        d = tmp_path / 'paper1' / 'paper' / name
        d.mkdir(parents=True)
        (d / 'command.sh').write_text(command + '\n')
        (d / 'log.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in records))
        (d / 'machine.txt').write_text('date\nname, memory.total [MiB], driver_version\nNVIDIA H100 80GB HBM3, '
                                       '81559 MiB, 580\ntorch 2.11\n')
        if exit_code is not None:
            (d / 'exit_code').write_text(exit_code + '\n')
        if stdout is not None:
            (d / 'stdout.txt').write_bytes(stdout)
    write('lm_mixit', 'python train.py config/wikitext_mixit.py --max_iters=200 --device=cuda',
          [dict(iter=0, val_loss=10.0), dict(iter=100, val_loss=5.25), dict(iter=200, val_loss=5.5)])
    write('khop_frozen_qk_1', 'python train.py config/khop_frozen_qk.py --seed=1',
          [dict(iter=0, val_loss=2.0, val_acc=0.1), dict(iter=250, val_loss=1.0, val_acc=0.5)], exit_code='124')
    write('khop_standard_1', 'python train.py config/khop_standard.py --max_iters=250 --seed=1',
          [dict(iter=0, val_loss=2.0, val_acc=0.1), dict(iter=250, val_loss=0.5, val_acc=0.8)], exit_code='124',
          stdout=b'iter 250: \xe2\x96\nSIGTERM: stopping after this step\n'   # a bar cut mid-character
                 b'final (khop, standard, iter 250): val_acc 0.8000\n')
    (paper,) = report.runs(root=str(tmp_path)).values()
    rows = {r[0]: r for r in map(report.row, paper)}
    assert rows['lm_mixit'][1:6] == ['200 / 200', 'finished', 'val loss', '5.500', '5.250 (step 100)']
    assert rows['khop_frozen_qk_1'][1:6] == ['250 / 5,000', 'stopped by the budget', 'test acc %', '50.00',
                                             '50.00 (step 250)']
    assert rows['khop_frozen_qk_1'][7] == 'NVIDIA H100 80GB HBM3'
    assert rows['khop_standard_1'][1:5] == ['250 / 250', 'finished', 'test acc %', '80.00']   # SIGTERM after its end
    assert [r['name'] for r in report.runs(['lm'], root=str(tmp_path))['paper1']] == ['lm_mixit']
    panels = report.plot(report.runs(root=str(tmp_path)), str(tmp_path / 'curves.png'))
    assert panels == {('paper1', 'khop'): ['khop_frozen_qk_1', 'khop_standard_1'], ('paper1', 'lm'): ['lm_mixit']}
    assert (tmp_path / 'curves.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_report_plot_gives_each_variant_a_colour_and_each_setting_a_style():
    """report.looks: runs that name their variant share its colour across settings and a line style within one
    (seed 1 solid, seed 2 dashed; the other split dashed); a run whose name lacks its variant (paper 2's) has a
    colour of its own and a solid line."""
    run = lambda name, variant: dict(name=name, variant=variant)
    look = report.looks([run('imdb_mixit_1', 'mixit'), run('imdb_standard_1', 'standard'),
                         run('imdb_mixit_2', 'mixit'), run('imdb_standard_2', 'standard'),
                         run('modular_addition_mixit_all_pairs', 'mixit'), run('dyck1_attn_sparse', 'universal'),
                         run('khop_seed0', None)])
    assert look['imdb_mixit_1'] == ('C0', '-') and look['imdb_standard_1'] == ('C1', '-')
    assert look['imdb_mixit_2'] == ('C0', '--') and look['imdb_standard_2'] == ('C1', '--')
    assert look['modular_addition_mixit_all_pairs'] == ('C0', ':')
    assert look['dyck1_attn_sparse'] == ('C2', '-') and look['khop_seed0'] == ('C3', '-')


def test_report_pace_reads_the_last_logged_step(tmp_path):
    """--pace: the last `ms/iter ... MFU` line of a run's stdout gives its step time, MFU and model FLOPs per step
    (MFU x peak x time), and the minutes its planned steps take at that pace and at the given MFU; a run without
    such lines has dashes."""
    for name, stdout in (('khop_standard_1', 'task khop | 12,544 tokens/iter | MFU against 989 TFLOP/s (H100)\n'
                                             'iter 100: loss 1.0, lr 1e-4, 50.0 ms/iter, 250,880 tok/s, MFU 1.5%\n'
                                             'iter 200: loss 0.9, lr 1e-4, 40.0 ms/iter, 313,600 tok/s, MFU 2.00%\n'),
                         ('khop_standard_2', None)):
        d = tmp_path / 'paper1' / 'paper' / name
        d.mkdir(parents=True)
        (d / 'command.sh').write_text('python train.py config/khop_standard.py --seed=1\n')
        if stdout:
            (d / 'stdout.txt').write_text(stdout)
    (paper,) = report.runs(root=str(tmp_path)).values()
    rows = {r[0]: r for r in (report.pace(run, 0.2) for run in paper)}
    flops = 0.02 * 989e12 * 0.040
    assert rows['khop_standard_1'][1:] == ['200 / 5,000', '40.0', '2%', f"{flops:.1e}", f"{5000 * 0.040 / 60:.1f}",
                                           f"{5000 * flops / (0.2 * 989e12) / 60:.1f}"]
    assert rows['khop_standard_2'][1:] == ['— / 5,000'] + ['—'] * 5
    assert report.pace_table(paper, 0.2).splitlines()[0].endswith('| at 20% MFU, min |')


# what sharing one GPU costs (experiments/gpu/sharing.sh), CUDA MPS (experiments/gpu/common.sh), paper.sh's JOBS and
# MPS
def test_sharing_measures_each_mode_on_a_cpu(tmp_path):
    """experiments/gpu/sharing.sh's logic, rehearsed on a CPU with a tiny model: the run alone and two copies side by
    side make their steps, and summary.txt gives each copy's ms/iter and the copies' steps per second together,
    beside the run alone's."""
    logs = tmp_path / 'logs'
    env = script_env(DEVICE='cpu', ITERS='20', N='2', MODES='alone shared', LOGS=str(logs),
                     RUNS=str(tmp_path / 'runs'),
                     EXTRA='--memorization_n_keys=16 --batch_size=32 --micro_batch_size=32 --n_layer=1 '
                           '--n_embd=16 --compile=False --dtype=float32')
    subprocess.run(['bash', 'experiments/gpu/sharing.sh'], cwd=ROOT, env=env, check=True, capture_output=True)
    for copy in ('alone/1', 'shared/1', 'shared/2'):
        assert (logs / copy / 'exit_code').read_text().strip() == '0', copy
        assert f"--out_dir={tmp_path / 'runs' / copy}" in (logs / copy / 'command.sh').read_text()
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.split('|')[1:-1]]
                                              for line in (logs / 'summary.txt').read_text().splitlines()
                                              if line.startswith('| ') and not line.startswith('| mode'))}
    assert set(rows) == {'alone', 'shared'} and rows['alone'][0] == '1' and rows['shared'][0] == '2'

    def median_ms(copy):                      # the summary's reading of one copy's log: its first record compiles
        records = [r['ms'] for r in map(json.loads, (logs / copy / 'train_log.jsonl').open()) if 'ms' in r][1:]
        return statistics.median(records)
    alone_ms, shared_ms = median_ms('alone/1'), [median_ms('shared/1'), median_ms('shared/2')]
    assert [float(m) for m in rows['shared'][1].split(', ')] == [float(f'{m:.1f}') for m in shared_ms]
    assert float(rows['alone'][1]) == float(f'{alone_ms:.1f}')
    together, alone = sum(1000 / m for m in shared_ms), 1000 / alone_ms
    assert float(rows['shared'][2]) == float(f'{together:.4g}') and float(rows['alone'][2]) == float(f'{alone:.4g}')
    assert rows['alone'][3] == '1.00x' and rows['shared'][3] == f'{together / alone:.2f}x'


def fake_mps_control(tmp_path, running):
    """A stand-in nvidia-cuda-mps-control on PATH (its daemon a file, running or not) that records each command
    it is given. Returns (environment, commands file, daemon file)."""
    bin_dir, log, state = tmp_path / 'bin', tmp_path / 'calls.txt', tmp_path / 'daemon'
    bin_dir.mkdir()
    control = bin_dir / 'nvidia-cuda-mps-control'
    control.write_text(f"""#!/bin/sh
if [ "$1" = -d ]; then echo start >> {log}; touch {state}; exit 0; fi
read command; echo "$command" >> {log}
case $command in quit) rm -f {state} ;; get_server_list) [ -f {state} ] && echo 4242 ;; esac
""")
    control.chmod(0o755)
    if running:
        state.touch()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES='', RUNS=str(tmp_path / 'runs'),
               PATH=os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), os.environ['PATH']]))
    return env, log, state


@pytest.mark.parametrize('running, calls', [
    (False, ['get_server_list', 'get_server_list', 'start', 'quit']),
    (True, ['get_server_list', 'quit', 'get_server_list', 'start', 'quit'])])
def test_sharing_leaves_no_mps_daemon_running(running, calls, tmp_path):
    """sharing.sh stops a running MPS daemon before its time-sliced modes; where the daemon it starts for the mps
    mode cannot run a CUDA process (here: no GPU), that mode is left out with the reason, and the daemon is
    stopped again."""
    env, log, state = fake_mps_control(tmp_path, running)
    logs = tmp_path / 'logs'
    subprocess.run(['bash', 'experiments/gpu/sharing.sh'], cwd=ROOT, env=dict(env, MODES='mps', LOGS=str(logs)),
                   check=True, capture_output=True)
    assert log.read_text().split() == calls and not state.exists()
    (row,) = [line for line in (logs / 'summary.txt').read_text().splitlines() if line.startswith('| mps |')]
    assert f"not run: CUDA MPS did not start (its logs: {logs / 'mps' / 'log'})" in row
    assert not (logs / 'mps' / '1').exists()


def test_paper_stage_runs_jobs_at_a_time_through_a_running_mps_daemon(tmp_path):
    """paper.sh with JOBS=1 starts each run when the one before has ended; with MPS=1 it uses the daemon it finds
    running (the stages beside it may be using it), records it in each run's machine.txt, and leaves it running."""
    env, log, state = fake_mps_control(tmp_path, running=True)
    logs = tmp_path / 'logs'
    env.update(MPS='1', JOBS='1', LOGS=str(logs), DONE=str(tmp_path / 'done'), DEVICE='cpu',
               VARIANTS='standard mixit',
               EXTRA='--memorization_n_keys=16 --max_iters=2 --eval_interval=2 --n_layer=1 --n_embd=16 '
                     '--batch_size=32 --micro_batch_size=32 --compile=False --dtype=float32')
    subprocess.run(['bash', 'experiments/gpu/paper.sh', 'memorization'], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    assert 'quit' not in log.read_text().split() and state.exists()
    first, second = (logs / 'paper1' / 'paper' / f'memorization_{v}' for v in ('standard', 'mixit'))
    for run in (first, second):
        assert (run / 'exit_code').read_text().strip() == '0'
        assert (run / 'machine.txt').read_text().splitlines()[-1] == 'CUDA MPS: on'
    assert (second / 'command.sh').stat().st_mtime >= (first / 'exit_code').stat().st_mtime


def test_every_train_py_stage_plans_runs_that_train_py_reads(tmp_path):
    """DRY=1 of each train.py stage of paper.sh: a line per run, '<name>: runs: python train.py <config> ...', whose
    config files are here (report.planned reads the steps, task and variant from them; the name says the variant)
    and whose flags are train.py's keys (its --help lists them), no two runs of the stages named alike
    (retrieval's at two m_max values); a run cut short of its config's steps says so in its name."""
    env = script_env(DRY='1', DONE=str(tmp_path / 'done'))
    usage = subprocess.run([sys.executable, 'train.py', '--help'], cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout
    keys = set(re.findall(r'^ +--(\w+)=', usage, re.M))
    assert {'max_iters', 'micro_batch_size', 'device'} <= keys
    names = []
    for stage in ('sentiment', 'depth', 'depth16', 'addition', 'memorization', 'khop', 'khop_qk', 'dyck1', 'modular',
                  'retrieval', 'lm', 'covariance'):
        out = subprocess.run(['bash', 'experiments/gpu/paper.sh', stage], cwd=ROOT, check=True, capture_output=True,
                             env=dict(env, MMAX='30 10') if stage == 'retrieval' else env, text=True).stdout
        for line in out.splitlines():
            name, how, command = line.split(': ', 2)
            assert how == 'runs' and command.startswith('python train.py config/'), line
            max_iters, task, variant = report.planned(command)
            assert max_iters and task and variant, f"{stage}: train.py cannot read {command}"
            assert f"_{variant}_" in f"_{name}_", f"{stage}: {name} does not name its variant {variant}"
            flags = {w[2:].partition('=')[0] for w in command.split() if w.startswith('--')}
            assert flags <= keys, f"{stage}: train.py has no {sorted(flags - keys)}"
            assert name.endswith(f"_{max_iters}steps") == (stage == 'retrieval' or stage.startswith('depth')), line
            names.append(name)
    assert len(names) == len(set(names)) and len(names) >= 40, names
    assert {'retrieval_frozen_qk_3000steps', 'retrieval_frozen_qk_mmax10_3000steps'} <= set(names)


def test_universal_stages_make_each_of_table_1s_rows_once():
    """DRY=1 of paper.sh's universal_a to universal_f: universal.py experiments at the paper's size, seed 0, one
    call per row, and the ten rows of paper 2's Table 1 (five tasks, attention-only and + residual and LN) each
    made by exactly one stage."""
    from experiments.paper2.runs import TASKS
    env = script_env(DRY='1')
    rows = []
    for stage in ('universal_a', 'universal_b', 'universal_c', 'universal_d', 'universal_e', 'universal_f'):
        out = subprocess.run(['bash', 'experiments/gpu/paper.sh', stage], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            assert line.startswith('universal.py: python universal.py experiments --which=table1 --size=paper '
                                   '--seeds=0 '), line
            flags = dict(w[2:].split('=', 1) for w in line.split()[4:])
            rows.append((flags['tasks'], flags['archs']))
    assert sorted(rows) == sorted((t, a) for t in TASKS for a in ('attn', 'res_ln'))


def test_covariance_stage_measures_the_model_each_run_reaches(tmp_path):
    """paper.sh covariance (Table 6): after each language model's run, sde.py covariance of its checkpoint lands
    in the run's folder as covariance.json (trained and at initialisation), its command as command.sh's second
    line, packed with the run; the stage called again leaves the finished run; report.py shows the covariance."""
    import base64
    (tmp_path / 'bytes.tiktoken').write_bytes(b''.join(base64.b64encode(bytes([b])) + b' %d\n' % b
                                                       for b in range(256)))
    (tmp_path / 'a.txt').write_text('hello world, the cat sat on the mat\n' * 60)
    (tmp_path / 'a_test.txt').write_text('test text of the cat\n' * 40)
    data, text = tmp_path / 'data', f'{tmp_path / "a.txt"},{tmp_path / "a_test.txt"}'
    subprocess.run([sys.executable, 'tasks.py', 'prepare', 'x', f'--input={text}', f'--out_dir={data}',
                    f'--tokenizer={tmp_path / "bytes.tiktoken"}'], cwd=ROOT, check=True, capture_output=True)
    logs, out = tmp_path / 'logs', tmp_path / 'out'
    env = script_env(LOGS=str(logs), DONE=str(tmp_path / 'done'), RUNS=str(tmp_path / 'runs'), OUT=str(out),
                     DEVICE='cpu', LAYERS='1', VARIANTS='mixit_nosink',
                     EXTRA=f'--lm_data_dir={data} --block_size=16 --n_embd=16 --n_head=2 --batch_size=4 '
                           '--micro_batch_size=4 --max_iters=2 --eval_interval=2 --warmup_iters=1 --compile=False '
                           '--dtype=float32')
    stage = lambda dry='0': subprocess.run(['bash', 'experiments/gpu/paper.sh', 'covariance'], cwd=ROOT, check=True,
                                           env=dict(env, DRY=dry), capture_output=True, text=True).stdout
    stage()
    run = logs / 'paper1' / 'paper' / 'covariance_mixit_nosink_1'
    measured = json.loads((run / 'covariance.json').read_text())
    assert measured['variant'] == 'mixit' and measured['n_layer'] == 1 and measured['iter'] == 2
    assert all(isinstance(measured[k]['covariance'], float) for k in ('init', 'trained'))
    train, measure = (run / 'command.sh').read_text().splitlines()
    assert '--mixit_sink_head=False' in train.split() and measure.startswith('python sde.py covariance ')
    tar = subprocess.run(['tar', '-tzf', str(out / 'covariance.tar.gz')], check=True, capture_output=True,
                         text=True).stdout.split()
    assert 'paper1/paper/covariance_mixit_nosink_1/covariance.json' in tar
    assert stage(dry='1') == f'covariance_mixit_nosink_1: finished, in {run}\n'
    (row,) = map(report.row, report.runs(root=str(logs))['paper1'])
    assert row[6] == (f"covariance (1e-2) {100 * measured['trained']['covariance']:.3f}, at init "
                      f"{100 * measured['init']['covariance']:.3f}")


# paper.sh's memorization stage cut to one tiny standard run that its budget stops: 30 s, long enough for a run
# slowed by a loaded CPU to write its first evaluations and checkpoint, far short of its million steps.
TINY_STOPPED_RUN = dict(DEVICE='cpu', TIME_S='30', VARIANTS='standard', TAG='_tiny',
                        EXTRA='--memorization_n_keys=16 --max_iters=1000000 --eval_interval=50 --n_layer=1 '
                              '--n_embd=16 --batch_size=32 --micro_batch_size=32 --compile=False --dtype=float32')


def test_paper_stage_continues_a_stopped_run_and_leaves_a_finished_one(tmp_path):
    """paper.sh across calls: a run its budget stopped (exit code 124) goes on from its checkpoint when the stage is
    called again, its log continuing the first call's; a run finished by the same command under DONE is not made
    again; TAG ends the run's name; DRY=1 says which of these a call would do, and does nothing."""
    logs, done = tmp_path / 'logs', tmp_path / 'done'
    env = script_env(LOGS=str(logs), DONE=str(done), RUNS=str(tmp_path / 'runs'), **TINY_STOPPED_RUN)
    stage = lambda dry='0': subprocess.run(['bash', 'experiments/gpu/paper.sh', 'memorization'], cwd=ROOT,
                                           env=dict(env, DRY=dry), check=True, capture_output=True, text=True).stdout
    run = logs / 'paper1' / 'paper' / 'memorization_standard_tiny'
    iters = lambda: [json.loads(line)['iter'] for line in (run / 'log.jsonl').read_text().splitlines()]
    assert stage(dry='1').startswith('memorization_standard_tiny: runs: python train.py ')
    assert not logs.exists() and not (tmp_path / 'runs').exists()
    stage()
    assert (run / 'exit_code').read_text().strip() == '124'
    first = iters()
    assert stage(dry='1').startswith('memorization_standard_tiny: continues: python train.py ')
    stage()
    assert (run / 'exit_code').read_text().strip() == '124'
    second = iters()
    assert len(first) >= 2 and second[:len(first)] == first and second[-1] > first[-1]
    assert (run / 'stdout.txt').read_text().count('stopped by SIGTERM') == 2       # both calls' output, kept
    command = (run / 'command.sh').read_text()
    assert '--overwrite=True' in command and '--init_from' not in command     # the command that a rerun matches

    finished = done / 'paper1' / 'paper' / 'memorization_standard_tiny'
    finished.mkdir(parents=True)
    (finished / 'command.sh').write_text(command)
    (finished / 'exit_code').write_text('124\n')          # stopped by the budget ...
    (finished / 'stdout.txt').write_text('stopped by SIGTERM at iteration 40: ckpt.pt saved\n')
    assert stage(dry='1').startswith('memorization_standard_tiny: continues: ')
    (finished / 'stdout.txt').write_text('SIGTERM: stopping after this step\nfinal (memorization, standard, '
                                         'iter 1000000): val_loss 0.1\n')   # ... after its last step
    assert 'memorization_standard_tiny: finished, in ' + str(finished) in stage(dry='1')
    (finished / 'stdout.txt').unlink()
    (finished / 'exit_code').write_text('0\n')
    assert 'memorization_standard_tiny: finished, in ' + str(finished) in stage(dry='1')
    assert 'memorization_standard_tiny: finished, in ' + str(finished) in stage()
    assert iters() == second and (run / 'exit_code').read_text().strip() == '124'
    renamed = re.sub(r'--out_dir=\S+', '--out_dir=out/elsewhere/memorization_standard', command)
    assert renamed != command
    (finished / 'command.sh').write_text(renamed)         # made before the run took its name: the same run
    assert 'memorization_standard_tiny: finished, in ' + str(finished) in stage(dry='1')
    (finished / 'command.sh').write_text(renamed.replace('--n_layer=1', '--n_layer=2'))
    assert stage(dry='1').startswith('memorization_standard_tiny: continues: ')   # another run: this machine's


def test_paper_stage_continues_a_run_stopped_on_another_machine(tmp_path):
    """paper.sh with $OUT set packs a run its budget stopped, its out_dir's checkpoint and logs, into
    $OUT/run_<run>.tar.gz; on another machine, with that call's log committed under DONE and the archive unpacked
    into RUNS, the stage continues the run, its log and stdout going on from the committed ones. A carried
    out_dir whose log is not the committed one starts anew."""
    import shutil
    import tarfile
    done = tmp_path / 'done' / 'paper1' / 'paper'
    env = script_env(DONE=str(tmp_path / 'done'), **TINY_STOPPED_RUN)
    runs = tmp_path / 'runs'                                    # RUNS, the same path on every machine
    machine = lambda m: dict(env, LOGS=str(tmp_path / m / 'logs'), RUNS=str(runs), OUT=str(tmp_path / m / 'OUT'))
    stage = lambda m, dry='0': subprocess.run(['bash', 'experiments/gpu/paper.sh', 'memorization'], cwd=ROOT,
                                              env=dict(machine(m), DRY=dry), check=True, capture_output=True,
                                              text=True).stdout
    name = 'memorization_standard_tiny'
    iters = lambda run: [json.loads(line)['iter'] for line in (run / 'log.jsonl').read_text().splitlines()]

    stage('a')
    shutil.rmtree(runs)                                         # machine b: a bare one, with the carried run
    with tarfile.open(tmp_path / 'a' / 'OUT' / f'run_{name}.tar.gz') as tar:
        assert sorted(tar.getnames()) == [f'{name}/{f}' for f in ('ckpt.pt', 'log.jsonl', 'train_log.jsonl')]
        tar.extractall(runs, filter='data')
    with tarfile.open(tmp_path / 'a' / 'OUT' / 'memorization.tar.gz') as tar:   # the stage's logs, committed
        tar.extractall(tmp_path / 'done', filter='data')
    first = iters(done / name)
    assert (done / name / 'exit_code').read_text().strip() == '124' and len(first) >= 2
    committed = (done / name / 'log.jsonl').read_text()
    (done / name / 'log.jsonl').write_text(committed + json.dumps(dict(iter=10 ** 6)) + '\n')   # another call's
    assert stage('b', dry='1').startswith(f'{name}: runs: python train.py ')
    (done / name / 'log.jsonl').write_text(committed)
    assert stage('b', dry='1').startswith(f'{name}: continues: python train.py ')
    stage('b')
    run = tmp_path / 'b' / 'logs' / 'paper1' / 'paper' / name
    second = iters(run)
    assert second[:len(first)] == first and second[-1] > first[-1]
    assert (run / 'stdout.txt').read_text().count('stopped by SIGTERM') == 2       # both machines' output


def test_paper_stage_archive_comes_first_within_out_files(tmp_path):
    """paper.sh with $OUT set writes the stage's archive as the stage starts, and packs a stopped run's out_dir
    only while $OUT holds fewer than OUT_FILES files: with the caller's own file and the stage's archive filling
    OUT_FILES=2, the stopped run is left out with a note, and the stage's logs still come back whole."""
    import tarfile
    out = tmp_path / 'OUT'
    out.mkdir()
    (out / 'console.txt').write_text("the caller's own file\n")
    env = script_env(LOGS=str(tmp_path / 'logs'), RUNS=str(tmp_path / 'runs'), DONE=str(tmp_path / 'done'),
                     OUT=str(out), OUT_FILES='2', **TINY_STOPPED_RUN)
    stage = subprocess.run(['bash', 'experiments/gpu/paper.sh', 'memorization'], cwd=ROOT, env=env, check=True,
                           capture_output=True, text=True)
    name = 'memorization_standard_tiny'
    assert sorted(os.listdir(out)) == ['console.txt', 'memorization.tar.gz']
    assert f'note: {name}: $OUT holds 2 files, OUT_FILES=2; its out_dir is not packed' in stage.stderr
    with tarfile.open(out / 'memorization.tar.gz') as tar:
        assert {f'paper1/paper/{name}/{f}' for f in ('command.sh', 'exit_code', 'log.jsonl')} <= set(tar.getnames())
        assert tar.extractfile(f'paper1/paper/{name}/exit_code').read().strip() == b'124'


def test_universal_stage_continues_an_embedding_only_run_on_another_machine(tmp_path):
    """paper.sh universal_b with $OUT set: each universal run its budget stopped comes back as
    $OUT/run_<run>.tar.gz, its out dir's paths under RUNS (the sparse model's ckpt.pt holding only E, U and the
    positions: config/universal_khop3.py sets checkpoint_frozen=False); on another machine, with the archive
    unpacked into RUNS, universal.py continues the run from it, its log and stdout going on from the first part's."""
    import tarfile
    runs = tmp_path / 'runs'
    flags = ('--device=cpu,--n_layer=1,--n_head=1,--head_dim=2,--n_embd=60,--n_test=16,--batch_size=8,'
             '--max_iters=1000000,--eval_interval=20,--log_interval=20,--compile=False,--dtype=float32')
    env = script_env(DONE=str(tmp_path / 'done'), RUNS=str(runs), TIME_S='30', UFLAGS=flags, JOBS='1')
    stage = lambda m: subprocess.run(['bash', 'experiments/gpu/paper.sh', 'universal_b'], cwd=ROOT, check=True,
                                     capture_output=True, text=True,
                                     env=dict(env, LOGS=str(tmp_path / m / 'logs'), OUT=str(tmp_path / m / 'OUT')))
    name = 'khop3_res_ln_sparse_seed0_rehearsal'          # m = m_sparse = 60 (H = L = 1, d = 2, d_in = 30)
    part = lambda m: tmp_path / m / 'logs' / 'paper2' / 'paper' / name
    iters = lambda run: [json.loads(line)['iter'] for line in (run / 'log.jsonl').read_text().splitlines()]

    stage('a')
    assert (part('a') / 'exit_code').read_text().strip() == '124'
    first = iters(part('a'))
    with tarfile.open(tmp_path / 'a' / 'OUT' / f'run_{name}.tar.gz') as tar:
        names = set(tar.getnames())
        assert {f'universal_b/paper/{name}/{f}' for f in ('ckpt.pt', 'command.sh', 'log.jsonl')} <= names
        ckpt = torch.load(tar.extractfile(f'universal_b/paper/{name}/ckpt.pt'), weights_only=True)
        assert 'transformer.h.0.attn.c_q.weight' in ckpt['frozen'] and 'transformer.wte.weight' in ckpt['model']
        shutil.rmtree(runs)                                  # machine b: a bare one, with the carried run
        tar.extractall(runs, filter='data')
    stage('b')
    second = iters(part('b'))
    assert len(first) >= 1 and second[:len(first)] == first and second[-1] > first[-1]
    stdout = (part('b') / 'stdout.txt').read_text()
    assert stdout.count('stopped by SIGTERM') == 2 and '| resumed at iteration' in stdout


def test_memorization_seeds_table_groups_a_settings_seeds():
    """memorization_seeds_table: one row per setting run with two or more seeds (the default seed first), its
    mean and sample standard deviation; a setting with one seed gets no row."""
    def run(variant, detail, seed, acc, bpp):
        command = 'python train.py config/cpu/memorization_x.py' + (f' --seed={seed}' if seed != 1337 else '')
        return dict(variant=variant, detail=detail, command=command,
                    final=dict(val_acc=acc, bits_per_param=bpp))
    rs = [run('mixit', 'w12_seed3', 3, 0.50, 1.5), run('mixit', 'w12', 1337, 0.60, 2.0),
          run('mixit', 'w12_seed2', 2, 0.70, 2.5), run('standard', 'w12', 1337, 0.9, 2.9),
          run('standard', '', 1337, 1.0, 1.9), run('standard', 'seed2', 2, 0.8, 1.5)]
    lines = tables.memorization_seeds_table(rs).splitlines()
    assert len(lines) == 4
    assert lines[2] == '| standard | — | 1337, 2 | 100.00 / 80.00 | 90.00 ± 14.14 | 1.90 / 1.50 | 1.70 ± 0.28 |'
    assert lines[3] == ('| mixit | w12 | 1337, 2, 3 | 60.00 / 70.00 / 50.00 | 60.00 ± 10.00 | 2.00 / 2.50 / 1.50 | '
                        '2.00 ± 0.50 |')
    assert tables.memorization_seeds_table(rs[3:4]) == ''


def test_speed_sets_each_setting_beside_the_default_and_hugging_face(tmp_path):
    """experiments/gpu/speed.py reads the speed stage's bench.py JSONs (not its profile traces): each setting's
    tokens/s over the default's and Hugging Face's, its memory over Hugging Face's, its losses' largest relative
    difference from the eager step's; --best takes the fastest compile mode with the fused AdamW, and foreach only
    where it beat the fused default; the targets are read off the fastest standard step."""
    from experiments.gpu import speed

    def write(name, mode, impl, results):
        runs = [dict(variant=v, compile_mode=None if mode is None else 'default' if v == 'hf_llama' else mode,
                     optimizer=impl if v != 'hf_llama' else 'fused', tokens_per_s=tps, ms_per_iter=1e3 / tps,
                     mfu=mfu, peak_memory=mem, losses=losses) for v, tps, mfu, mem, losses in results]
        (tmp_path / f'{name}.json').write_text(json.dumps(dict(setup=dict(device_name='NVIDIA H100 80GB HBM3',
                                                                          compile_mode=mode), results=runs)))
    loss = [10.0, 9.0, 8.0]
    write('eager', None, 'fused', [('standard', 50.0, 0.2, 10, loss)])
    write('default', 'default', 'fused', [('standard', 100.0, 0.3, 8, [10.0, 9.0, 8.08]),
                                          ('hf_llama', 80.0, 0.25, 20, [10.0, 9.1, 8.2])])
    write('reduce_overhead', 'reduce-overhead', 'fused', [('standard', 120.0, 0.36, 9, loss)])
    write('max_autotune', 'max-autotune', 'fused', [('standard', 110.0, 0.33, 9, loss)])
    write('foreach', 'default', 'foreach', [('standard', 99.0, 0.3, 8, loss)])
    (tmp_path / 'profile_best_standard.json').write_text(json.dumps(dict(traceEvents=[])))
    runs = speed.load(str(tmp_path))
    assert list(runs) == ['eager', 'default', 'foreach', 'max_autotune', 'reduce_overhead']
    rows = {(r['setting'], r['variant']): r for r in speed.rows(runs)}
    assert ('foreach', 'hf_llama') not in rows and rows['default', 'hf_llama']['over_hf'] is None
    ro = rows['reduce_overhead', 'standard']
    assert ro['over_default'] == pytest.approx(1.2) and ro['over_hf'] == pytest.approx(1.5)
    assert ro['memory_over_hf'] == pytest.approx(0.45) and ro['loss_vs_eager'] == 0
    assert rows['default', 'standard']['loss_vs_eager'] == pytest.approx(0.01)
    assert speed.best(runs) == ('reduce-overhead', 'fused')
    write('foreach', 'default', 'foreach', [('standard', 101.0, 0.3, 8, loss)])
    assert speed.best(speed.load(str(tmp_path))) == ('reduce-overhead', 'foreach')
    write('best', 'reduce-overhead', 'foreach', [('standard', 130.0, 0.41, 13, loss)])
    out = speed.table(speed.load(str(tmp_path)))
    assert out.startswith('On NVIDIA H100 80GB HBM3:')
    assert '| best | standard | reduce-overhead | foreach | 130 | 7.7 | 41.0% |' in out
    assert '| standard ≥ 40% MFU | 41.0% | met |' in out and "tokens/s | 1.62× | met |" in out
    assert "| standard ≤ 0.6× Hugging Face's peak memory | 0.65× | missed |" in out


def test_universal_khop2_stage_and_rows_pick_their_runs(tmp_path):
    """DRY=1 of paper.sh universal_khop2: paper 2's 2-hop + residual and LN, the routed sparse construction at the
    paper's size, one universal.py call for SEEDS (0 1 2 by default), JOBS at a time; ROWS picks rows of a
    universal_<letter> stage and MODELS its models; a row or model a stage lacks, or VARIANTS given to a stage that
    takes none, is a one-line error."""
    import shlex
    env = script_env(DRY='1', DONE=str(tmp_path / 'done'))
    plan = lambda stage, **kw: subprocess.run(['bash', 'experiments/gpu/paper.sh', stage], cwd=ROOT, check=True,
                                              env=dict(env, **kw), capture_output=True, text=True).stdout
    (line,) = plan('universal_khop2').splitlines()
    words = shlex.split(line.split(': ', 1)[1])
    assert words[:3] == ['python', 'universal.py', 'experiments'], line
    flags = dict(w[2:].split('=', 1) for w in words[3:])
    assert {k: flags[k] for k in ('which', 'size', 'seeds', 'tasks', 'archs', 'models', 'jobs')} == dict(
        which='table1', size='paper', seeds='0,1,2', tasks='khop2', archs='res_ln', models='sparse', jobs='3')
    (line,) = plan('universal_khop2', SEEDS='1').splitlines()
    assert '--seeds=1 ' in line
    (line,) = plan('universal_a', ROWS='dyck1:attn').splitlines()
    assert '--tasks=dyck1 --archs=attn --jobs=3 ' in line
    (line,) = plan('universal_b', MODELS='sparse random').splitlines()
    assert '--tasks=khop3 --archs=res_ln --models=sparse\\,random --jobs=3 ' in line
    for stage, kw, message in (('universal_a', dict(ROWS='khop3:attn'), "error: universal_a's ROWS are dyck1:attn, "
                                                                        "khop2:res_ln (got 'khop3:attn')"),
                               ('khop', dict(ROWS='dyck1:attn'), "error: khop takes no ROWS (got 'dyck1:attn')"),
                               ('universal_b', dict(MODELS='sparse all'), "error: MODELS are sparse, random, full"),
                               ('universal_khop2', dict(VARIANTS='lr1e-2'), "error: universal_khop2 takes no VARIANTS")):
        bad = subprocess.run(['bash', 'experiments/gpu/paper.sh', stage], cwd=ROOT, env=dict(env, **kw),
                             capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stderr.startswith(message) and bad.stderr.count('\n') == 1, bad.stderr


def test_plan_calls_are_stages_that_dry_run(tmp_path):
    """experiments/gpu/plan.sh: each call that PLAN.md lists is a call of plan.sh, and DRY=1 of each
    lists paper.sh's runs (or the speed stage's command) without an error; a call it lacks is a one-line error."""
    env = script_env(DRY='1', DONE=str(tmp_path / 'done'), RUNS=str(tmp_path / 'runs'))
    plan = open(os.path.join(ROOT, 'experiments', 'gpu', 'PLAN.md')).read()
    listed = re.findall(r'`bash experiments/gpu/plan\.sh (\w+)`', plan)
    assert listed[:3] == ['1', '2', '3'] and len(listed) >= 15, listed
    for call in listed:
        out = subprocess.run(['bash', 'experiments/gpu/plan.sh', call], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True).stdout.splitlines()
        assert out, call
        if call in ('2', '10'):
            assert out == [f"speed: SPEED_S={240 if call == '2' else 540} bash experiments/gpu/run.sh speed"]
        else:
            assert all(re.match(r'(\w|[.-])+: (runs|continues|finished)|universal\.py: ', line) for line in out), out
    assert not (tmp_path / 'runs').exists()
    bad = subprocess.run(['bash', 'experiments/gpu/plan.sh', '13'], cwd=ROOT, env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: name a call: 1, 2, 3, 3b") and \
        bad.stderr.count('\n') == 1
