"""Every key of every script driven to its edges.

For each script and subcommand, the keys and defaults come from its own `--help` (what `configurator` declares),
and each key gets the values a tired user or a bad script sends, chosen by the default's type: 0, -1, a huge
number, nan, inf, a fraction for an integer, the wrong type, empty; for text, a folder, a file of junk, a missing
path and an unwritable one. Each case must end normally (exit 0, no traceback) or with one `error:` line (exit 2:
bad input; 3: a fault met while running, e.g. a divergence) — never a traceback, never `nan` printed on exit 0.
Cases run in forked children of this process (torch imported once), two at a time, each under a time limit.

LEGITIMATE lists the edge values that are legitimate settings with another outcome (a run that trains for ever, a
check that reports failure), which are not run or accept that outcome, with the reason.
"""

import ast
import io
import os
import re
import runpy
import signal
import sys
import time
import traceback

import pytest
import torch  # noqa: F401  (imported once here: every forked case starts with it)

from conftest import ROOT

pytestmark = pytest.mark.skipif(not (hasattr(os, 'fork') and os.path.isdir('/proc')),
                                reason='cases run in forked children, their sessions found in /proc')

HUGE = '1000000000000'
TIME_LIMIT_S = 60

# the values a tired user or a bad script sends, by the default's type; {folder} etc. are filled per case
EDGES = {
    bool: ['maybe', ''],
    int: ['0', '-1', HUGE, '1.5', 'x', ''],
    float: ['0', '-1', 'nan', 'inf', '-inf', '1e300', 'x', ''],
    str: ['', '{folder}', '{file}', '{missing}', '{unwritable}'],
    tuple: ['', 'x', '0,-1', 'nan'],
}

TRAIN_TINY = ['--task=retrieval', '--retrieval_vocab_size=32', '--retrieval_m_max=4', '--n_test=16', '--n_layer=1',
              '--n_head=2', '--n_embd=16', '--batch_size=4', '--max_iters=2', '--eval_interval=2', '--eval_iters=1',
              '--log_interval=1', '--compile=False', '--dtype=float32', '--device=cpu', '--warmup_iters=1',
              '--lr_decay_iters=2', '--out_dir={case}/run', '--overwrite=True']
BENCH_TINY = ['--shape=small', '--block_size=16', '--vocab_size=64', '--n_layer=1', '--n_head=2', '--n_embd=16',
              '--batch_size=2', '--iters=10', '--warmup=0', '--compile=False', '--dtype=float32', '--device=cpu',
              '--data_iters=0', '--peak_flops=1e12']
HMC_TINY = ['--out_dir={case}/out', '--P=10', '--P_test=10', '--T=4', '--N0_feat=5', '--widths=3', '--max_iters=20']

# script, its command line before the keys (a positional may name {lm}, the tiny model's out_dir), tiny settings
SCRIPTS = {
    'train': ('train.py', [], TRAIN_TINY),
    'sample': ('sample.py', [], ['--out_dir={lm}', '--start=the', '--num_samples=1', '--max_new_tokens=4']),
    'bench': ('bench.py', [], BENCH_TINY),
    'sde check': ('sde.py', ['check'], ['--checks=c', '--out_dir={case}/sde', '--n_collapse=4', '--m_collapse=3',
                                        '--depth_collapse=4', '--draws_collapse=2']),
    'sde covariance': ('sde.py', ['covariance', '{lm}/ckpt.pt'], ['--n_seq=2']),
    'universal verify': ('universal.py', ['verify'], ['--H=1', '--L=1', '--d=2', '--d_in=3', '--n=3']),
    'universal dims': ('universal.py', ['dims'], ['--H=2', '--L=2', '--d=2', '--d_in=4']),
    'universal table': ('universal.py', ['table'], ['--tasks=khop1', '--archs=res', '--results={case}/none',
                                                    '--assets={case}/assets']),
    'universal experiments': ('universal.py', ['experiments'], [
        '--which=table2', '--tasks=khop1', '--archs=res', '--models=sparse', '--seeds=0', '--out={case}/out',
        '--results={case}/results', '--assets={case}/assets', '--tag=edge',
        '--flags=--max_iters=2,--eval_interval=2,--eval_iters=1,--n_test=16,--batch_size=4']),
    'bayes_paths hmc': ('bayes_paths.py', ['hmc'], HMC_TINY),
    'bayes_paths nuts': ('bayes_paths.py', ['nuts'], HMC_TINY[:-2] + ['--N=3', '--warmup=2', '--samples=2',
                                                                       '--max_tree_depth=2', '--max_iters=20']),
    'bayes_paths oneshot': ('bayes_paths.py', ['oneshot'], [
        '--out_dir={case}/out', '--data_dir={oneshot}', '--n_embd=8', '--qk_dim=4', '--heads=2', '--layers=1',
        '--gd_steps=2', '--gd_batch=4', '--eval_every=2', '--n_eval=8', '--P=6', '--widths=10', '--taus=1.0',
        '--max_iters=20']),
    'bayes_paths timing': ('bayes_paths.py', ['timing'], ['--P=8', '--heads=2', '--layers=1', '--N0=4', '--N=3',
                                                          '--repeats=1']),
    'tasks prepare': ('tasks.py', ['prepare', 'tiny'], ['--input={text}', '--tokenizer=char', '--test_fraction=0.2',
                                                        '--out_dir={case}/data']),
}

# (script, key): (the edge values that are legitimate settings, why; 'skip': not run, else the exit codes accepted)
LONG = 'a legitimate setting that runs for hours; its size is the user\'s choice'
REPO = "'' is the default, a folder in the repository, which a test leaves alone"
LEGITIMATE = {
    ('train', 'max_iters'): ({HUGE}, 'skip', LONG),
    ('train', 'eval_iters'): ({HUGE}, 'skip', LONG),
    ('train', 'lr_decay_iters'): ({HUGE}, 'skip', 'a schedule longer than the run: legitimate, and fast here'),
    ('bench', 'iters'): ({HUGE}, 'skip', LONG),
    ('bench', 'warmup'): ({HUGE}, 'skip', LONG),
    ('bench', 'rounds'): ({HUGE}, 'skip', LONG),
    ('sample', 'num_samples'): ({HUGE}, 'skip', 'samples print as they are drawn, for as long as asked'),
    ('sample', 'max_new_tokens'): ({HUGE}, 'skip', 'text prints as it is drawn, for as long as asked'),
    ('bayes_paths nuts', 'warmup'): ({HUGE}, 'skip', LONG),
    ('bayes_paths nuts', 'samples'): ({HUGE}, 'skip', LONG),
    ('bayes_paths oneshot', 'gd_steps'): ({HUGE}, 'skip', LONG),
    ('bayes_paths oneshot', 'nuts_samples'): ({HUGE}, 'skip', LONG),
    ('bayes_paths oneshot', 'nuts_warmup'): ({HUGE}, 'skip', LONG),
    ('bayes_paths timing', 'repeats'): ({HUGE}, 'skip', LONG),
    ('sde check', 'depth_collapse'): ({HUGE}, 'skip', LONG),
    ('tasks prepare', 'out_dir'): ({''}, 'skip', REPO),
    ('universal experiments', 'out'): ({''}, 'skip', REPO),
    ('universal experiments', 'results'): ({''}, 'skip', REPO),
    ('universal verify', 'tol'): ({'0', '-1', '-inf'}, {0, 1}, 'a tolerance no float error meets: verify reports '
                                                                'FAIL with exit 1, its verdict'),
}


def parse_default(text):
    """The Python value of a --help default ('1e-05', "'cpu'", '0,1,2', '' for an empty tuple)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return tuple(text.split(',')) if text else ()


def keys_from_help(text):
    """{key: kind} from a --help text; kind is one of EDGES' types (a None default: its annotation's type)."""
    keys = {}
    for line in text.splitlines():
        m = re.match(r"  --(\w+)=(.*?)(?:\s{2,}|$)", line)
        if not m:
            continue
        value = parse_default(m.group(2))
        if value is None:
            note = re.search(r'\[(\w+) \| None\]', line)
            kind = {'int': int, 'float': float, 'bool': bool}.get(note.group(1) if note else '', str)
        else:
            kind = tuple if isinstance(value, (tuple, list)) else type(value)
        keys[m.group(1)] = kind
    return keys


def _child(script, argv, out_path):
    """In the forked child: run script with argv as __main__, stdout and stderr into out_path's two files; in a
    session of its own, which its own children keep (a prefetching worker leaves the process group)."""
    os.setsid()
    for fd, suffix in ((1, '.out'), (2, '.err')):
        f = os.open(out_path + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, 'wb', closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, 'wb', closefd=False), write_through=True)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(sig, signal.SIG_DFL)
    sys.argv = [script, *argv]
    code = 0
    try:
        runpy.run_path(os.path.join(ROOT, script), run_name='__main__')
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else (print(e.code, file=sys.stderr), 1)[1])
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def kill_session(sid):
    """SIGKILL every process of the session sid (read from /proc)."""
    for entry in os.listdir('/proc'):
        try:
            with open(f'/proc/{entry}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.isdigit() and int(fields[3]) == sid:        # stat's 6th field, the session id
            try:
                os.kill(int(entry), signal.SIGKILL)
            except ProcessLookupError:
                pass


def run_cases(cases, jobs=2, limit=TIME_LIMIT_S):
    """cases: [(name, script, argv, folder)] -> {name: (exit code or 'timeout', stdout, stderr)}; each in a
    forked child of this process (its own process group, killed with it at the limit), jobs at a time."""
    results, running, pending = {}, {}, list(cases)
    while pending or running:
        while pending and len(running) < jobs:
            name, script, argv, folder = pending.pop(0)
            out = os.path.join(folder, 'console')
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(script, argv, out)
            running[pid] = (name, out, time.monotonic())
        time.sleep(0.01)
        for pid, (name, out, start) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done and time.monotonic() - start < limit:
                continue
            if not done:
                kill_session(pid)
                os.waitpid(pid, 0)
                code = 'timeout'
            else:
                kill_session(pid)                   # a worker left behind by a case that ended
                code = os.waitstatus_to_exitcode(status)
            texts = []
            for suffix in ('.out', '.err'):
                with open(out + suffix, errors='replace') as f:
                    texts.append(f.read())
            results[name] = (code, *texts)
            del running[pid]
    return results


def verdict(code, out, err, accepted=()):
    """None when (code, out, err) is a normal end or one error line; else what is wrong, in a few words."""
    lines = err.strip().splitlines()
    if 'Traceback (most recent call last)' in out + err:
        return 'a traceback: ' + (lines[-1] if lines else '')
    if code in accepted:
        return None
    if code == 0:
        return "exit 0 with 'nan' in its output" if re.search(r'\bnan\b', out) else None
    if code in (2, 3):
        errors = [line for line in lines if line.startswith('error: ')]
        one = len(errors) == 1 and errors[0] == lines[-1]
        return None if one else f'exit {code} without one error line: {lines[-3:]}'
    return f'exit {code}: {lines[-2:]}'


@pytest.fixture(scope='module')
def fixtures(tmp_path_factory):
    """What every case may name: a tiny character LM's out_dir ({lm}), one-shot data ({oneshot}), a text file."""
    from test_bayes_paths import write_oneshot_data
    from test_sample import make_char_lm
    root = tmp_path_factory.mktemp('edges')
    write_oneshot_data(root / 'oneshot')
    (root / 'text.txt').write_text('the cat sat on the mat. ' * 50)
    return dict(root=root, lm=make_char_lm(mkdir(root / 'lm'))['standard'], oneshot=str(root / 'oneshot'),
                text=str(root / 'text.txt'))


def mkdir(path):
    path.mkdir()
    return path


def filled(args, names):
    return [a.format(**names) for a in args]


@pytest.mark.parametrize('script', SCRIPTS)
def test_every_key_at_its_edges_ends_normally_or_in_one_line(script, fixtures):
    """Each key of the script, at each edge value of its type: a normal end or one `error:` line (module doc)."""
    path, prefix, tiny = SCRIPTS[script]
    root = fixtures['root'] / script.replace(' ', '_')
    root.mkdir()
    names = {k: v for k, v in fixtures.items() if k != 'root'}
    helped = run_cases([('help', path, filled(prefix, names) + ['--help'], str(root))])['help']
    assert helped[0] == 0, helped
    keys = keys_from_help(helped[1])
    assert keys, f'{script} --help lists no keys'
    cases, accepted = [], {}
    for key, kind in keys.items():
        legit, outcome, _ = LEGITIMATE.get((script, key), (set(), 'skip', ''))
        for i, value in enumerate(EDGES[kind]):
            if value in legit and outcome == 'skip':
                continue
            case = root / f'{key}-{i}'
            (case / 'folder').mkdir(parents=True)
            (case / 'file').write_bytes(b'\x00\xffjunk\n' * 3)
            where = dict(names, case=str(case), folder=str(case / 'folder'), file=str(case / 'file'),
                         missing=str(case / 'missing' / 'x'), unwritable='/proc/edge/x')
            argv = filled(prefix, where) + filled(tiny, where) + [f'--{key}={value.format(**where)}']
            cases.append((f'--{key}={value}', path, argv, str(case)))
            accepted[f'--{key}={value}'] = outcome if value in legit else ()
    results = run_cases(cases)
    assert any(r[0] == 0 for r in results.values()), f'{script}: no case ended normally: the tiny settings fail'
    wrong = {name: why for name, r in results.items() if (why := verdict(*r, accepted=accepted[name]))}
    assert not wrong, f'{script}: {len(wrong)} of {len(cases)} edge cases:\n' + '\n'.join(
        f'  {name}: {why}' for name, why in sorted(wrong.items()))
