"""The claims tables (results/paper<N>/claims.toml, rendered by experiments/claims.py into docs/paper<N>.md and
README.md) hold what the committed logs hold: every run they cite exists, every number in them is read from its
log, every verdict is from the fixed vocabulary, and no 'reproduced' verdict stands where the runs do not show the
paper's number. The tables in the docs are the rendering of today's logs."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from experiments import claims as C

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')

# every table and figure each paper reports with a result (its hyperparameter tables and schematic figures aside),
# and each needs a row: a claim's `where` starts with one of these
REPORTED = {
    'paper1': ('Table 1', 'Fig. 2', 'Fig. 3', 'Tables 2, 9', 'Tables 3, 10', 'Table 4', 'Table 5', 'Table 6',
               'Table 9', 'Table 11', 'App. D', 'Theorem 2.1'),
    'paper2': ('Theorems 3.1-3.4', 'Table 1 (a)', 'Table 1 (b)', 'Table 2 (a)', 'Table 2 (b)', 'Fig. 2',
               'Table 3', 'Table 4'),
    'paper3': ('§4.1', 'Fig. 2c', 'Fig. 2d', 'Fig. 2e', 'Fig. 3b', 'Fig. 3c', 'Fig. 3d', 'Fig. 3e', 'Fig. 3f',
               'Fig. 5c', 'Fig. 6', 'Fig. 7', 'App. F'),
}


@pytest.fixture(scope='module')
def every():
    return C.load_all(C.PAPERS, ROOT)


def test_the_tables_in_the_docs_are_the_logs(every):
    """docs/paper<N>.md and README.md hold the tables rendered from today's logs (else: python -m
    experiments.claims --write)."""
    assert C.stale(ROOT, every) is None, C.stale(ROOT, every)


def test_check_passes_from_the_command_line():
    out = subprocess.run([sys.executable, '-m', 'experiments.claims', '--check'], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize('paper', C.PAPERS)
def test_every_reported_table_and_figure_has_a_row(every, paper):
    claims = next(c for c in every if c['paper'] == paper)
    wheres = [c['where'] for c in claims['claims']]
    for item in REPORTED[paper]:
        assert any(w == item or w.startswith(item + ',') or w.startswith(item + ' ') for w in wheres), item


def anchors(doc):
    """GitHub's anchors of a Markdown file's headings."""
    heads, fenced = [], False
    with open(os.path.join(ROOT, doc)) as f:
        for line in f:
            fenced ^= line.startswith('```')
            if not fenced and re.match(r'#{1,6} ', line):
                heads.append(line.lstrip('#').strip())
    return {re.sub(r'[^\w\- ]', '', h.lower()).replace(' ', '-') for h in heads}


def test_every_claim_links_to_a_section_of_its_page(every):
    for claims in every:
        have = anchors(claims['doc'])
        missing = [c['section'] for c in claims['claims'] if c['section'] not in have]
        assert not missing, (claims['doc'], missing)


@pytest.mark.parametrize('doc', ['docs/paper1.md', 'docs/paper2.md', 'docs/paper3.md'])
def test_the_pages_links_within_themselves_resolve(doc):
    with open(os.path.join(ROOT, doc)) as f:
        links = set(re.findall(r'\]\(#([^)]+)\)', f.read()))
    assert links <= anchors(doc), links - anchors(doc)


def test_every_verdict_is_in_the_vocabulary_and_every_run_is_here(every):
    for claims in every:
        for c in claims['claims']:
            assert c['verdict'] in C.VERDICTS, (claims['paper'], c['id'], c['verdict'])
            for cell in c['cells']:
                for run in cell['runs']:
                    assert os.path.isfile(os.path.join(ROOT, 'results', run, cell['file'])), (c['id'], run)


def test_reproduced_only_where_the_runs_show_the_papers_number(every):
    for claims in every:
        for c in claims['claims']:
            if c['verdict'] in C.REPRODUCED:
                ok, why = C.holds(c)
                assert ok, (claims['paper'], c['id'], why)


def test_the_numbers_are_the_logs_last_records(every):
    """Each value the tables show of a log.jsonl at its last record is that record's metric, read here without the
    generator's reader."""
    checked = 0
    for claims in every:
        for c in claims['claims']:
            for cell in c['cells']:
                if cell['file'] != 'log.jsonl' or cell['step'] != 'last' or '(' in cell['metric']:
                    continue
                for run, got in zip(cell['runs'], cell['values']):
                    with open(os.path.join(ROOT, 'results', run, 'log.jsonl')) as f:
                        last = [json.loads(line) for line in f if line.strip()][-1]
                    assert got == pytest.approx(last[cell['metric']] * cell['scale'], abs=1e-9), (c['id'], run)
                    checked += 1
    assert checked > 100


# ---- the rules, on a small repository made here ----------------------------------------------------------------

CLAIMS = '''
title = "Paper 1: a test"
doc = "docs/paper1.md"

[[claim]]
id = "solves"
where = "Table 1"
claim = "the model solves it"
section = "one"
verdict = "reproduced"
paper = 97.0
runs = ["paper1/run_a", "paper1/run_b"]
check = "value"
tolerance = 1.0
steps = 100
size = "paper"
'''


def make_repo(tmp_path, claims=CLAIMS, accs=(0.965, 0.99)):
    for name, acc in zip(('run_a', 'run_b'), accs):
        d = tmp_path / 'results' / 'paper1' / name
        d.mkdir(parents=True)
        (d / 'log.jsonl').write_text(json.dumps(dict(iter=50, val_acc=0.5)) + '\n' +
                                     json.dumps(dict(iter=100, val_acc=acc)) + '\n')
    (tmp_path / 'results' / 'paper1' / 'claims.toml').write_text(claims)
    (tmp_path / 'docs').mkdir()
    (tmp_path / 'docs' / 'paper1.md').write_text(
        '# Paper 1\n\n<!-- claims:paper1 -->\n<!-- /claims:paper1 -->\n\n## One\n')
    return str(tmp_path)


def test_write_then_check_then_a_log_changes(tmp_path):
    root = make_repo(tmp_path)
    every = C.load_all(('paper1',), root)
    assert C.stale(root, every) is not None                 # the block is empty
    assert C.write(root, every) == ['docs/paper1.md']
    assert C.stale(root, every) is None
    text = open(os.path.join(root, 'docs', 'paper1.md')).read()
    assert '96.5, 99.0' in text and '**reproduced**' in text and '## One' in text
    log = tmp_path / 'results' / 'paper1' / 'run_b' / 'log.jsonl'
    log.write_text(log.read_text().replace('0.99', '0.98'))
    reason = C.stale(root, C.load_all(('paper1',), root))
    assert reason and 'docs/paper1.md' in reason and '\n' not in reason
    out = subprocess.run([sys.executable, '-m', 'experiments.claims', 'paper1', '--check', f'--root={root}'],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1 and len(out.stdout.strip().splitlines()) == 1, out.stdout + out.stderr


def test_a_missing_run_fails(tmp_path):
    root = make_repo(tmp_path)
    shutil.rmtree(tmp_path / 'results' / 'paper1' / 'run_b')
    with pytest.raises(C.ClaimError, match='run_b'):
        C.load_all(('paper1',), root)


def test_a_verdict_outside_the_vocabulary_fails(tmp_path):
    root = make_repo(tmp_path, CLAIMS.replace('verdict = "reproduced"', 'verdict = "partly"\nnote = "x"'))
    with pytest.raises(C.ClaimError, match='partly'):
        C.load_all(('paper1',), root)


@pytest.mark.parametrize('accs', [(0.90, 0.95), (0.99, 1.0)])
def test_reproduced_with_the_papers_number_outside_the_runs_fails(tmp_path, accs):
    """97.0 against runs at 90-95 or 99-100 with a tolerance of 1 point: outside [min - 1, max + 1]."""
    root = make_repo(tmp_path, accs=accs)
    with pytest.raises(C.ClaimError, match='outside'):
        C.load_all(('paper1',), root)
    root2 = make_repo(tmp_path / 'b', CLAIMS.replace('verdict = "reproduced"', 'verdict = "inconclusive"\nnote = "x"'),
                      accs=accs)
    C.load_all(('paper1',), root2)                       # any other verdict stands


def test_a_large_tolerance_fails(tmp_path):
    root = make_repo(tmp_path, CLAIMS.replace('tolerance = 1.0', 'tolerance = 5.0'), accs=(0.90, 0.95))
    with pytest.raises(C.ClaimError, match='tolerance'):
        C.load_all(('paper1',), root)


def test_not_run_lists_no_runs(tmp_path):
    root = make_repo(tmp_path, CLAIMS.replace('verdict = "reproduced"', 'verdict = "not run"\nnote = "x"'))
    with pytest.raises(C.ClaimError, match='not run'):
        C.load_all(('paper1',), root)


def test_expect_and_order_checks():
    cell = lambda paper, values, **kw: dict(paper=paper, values=values, runs=['r'] * len(values), **kw)
    fails = dict(id='x', check='value', cells=[cell(48.6, [62.4], expect='< 90')])
    assert C.holds(fails)[0]
    assert not C.holds(dict(fails, cells=[cell(48.6, [95.0], expect='< 90')]))[0]
    order = dict(id='y', check='order', cells=[cell(2.98, [2.85]), cell(2.25, [2.46]), cell(1.13, [1.75])])
    assert C.holds(order)[0]
    assert not C.holds(dict(order, cells=[cell(2.98, [2.0]), cell(2.25, [2.46])]))[0]
    assert C.holds(dict(id='z', check='at_least', cells=[cell(97.01, [100.0], tolerance=0.5)]))[0]
    assert not C.holds(dict(id='z', check='at_least', cells=[cell(100, [96.3, 97.6], tolerance=2.0)]))[0]


# ---- the facts and the rules they enforce ----------------------------------------------------------------------

def plant(tmp_path, **fields):
    """make_repo with the claim's header fields replaced (None deletes one)."""
    text = CLAIMS
    for key, value in fields.items():
        line = re.search(rf'^{key} = .*$', text, re.M)
        new = '' if value is None else f'{key} = {json.dumps(value)}'
        text = text.replace(line.group(0), new) if line else text + new + '\n'
    return make_repo(tmp_path, text)


CONTROLS = '''
[[claim.cell]]
label = "flat one"
paper = 97.0
runs = ["paper1/run_a"]
[[claim.cell]]
label = "flat two"
paper = 96.0
runs = ["paper1/run_b"]
[[claim.cell]]
label = "control"
control = true
runs = ["paper1/run_c"]
'''

# rule -> (the planted claim's fields that break it, the same claim made consistent)
BROKEN = {
    'not-reproduced-unsettled': (dict(verdict='not reproduced', note='x', steps=200),
                                 dict(verdict='inconclusive', note='x', steps=200)),
    'reproduced-stopped': (dict(steps=200), dict(steps=200, check='at_least', paper=96.0)),
    'reproduced-size': (dict(size=None), dict(size=None, verdict='reproduced at CPU size only', note='x',
                                                one_run='a test')),
    'other-data': (dict(data='another corpus'), dict(data='another corpus', verdict='inconclusive', note='x')),
    'no-expectation': (dict(paper='solves'), dict(paper='solves', expect='>= 90')),
    'no-control': (dict(check='flat', ratio=1.25, runs=None), None),
    'seeds': (dict(size='cpu', verdict='reproduced at CPU size only', note='x'),
              dict(size='cpu', verdict='inconclusive', note='x')),
}


@pytest.mark.parametrize('rule', list(C.RULES))
def test_each_rule_refuses_the_verdict_its_facts_contradict(tmp_path, rule):
    """One planted claim per rule: the contradicting verdict is refused with a line naming the claim and the rule;
    the consistent one stands."""
    assert set(BROKEN) == set(C.RULES)
    broken, fixed = BROKEN[rule]
    root = plant(tmp_path / 'broken', **broken)
    if rule == 'no-control':                                   # cells of their own, no control among them
        text = open(os.path.join(root, 'results', 'paper1', 'claims.toml')).read()
        own = CONTROLS.split('[[claim.cell]]\nlabel = "control"')[0]
        text = text.replace('paper = 97.0\n', '').split('[[claim.cell]]')[0] + own
        open(os.path.join(root, 'results', 'paper1', 'claims.toml'), 'w').write(text)
    found = C.problems(C.measure(C.load('paper1', root)))
    assert len(found) == 1 and f'[{rule}]' in found[0] and "claim 'solves'" in found[0], found
    if fixed is not None:
        C.load_all(('paper1',), plant(tmp_path / 'fixed', **fixed))


def control_repo(tmp_path, control_acc):
    text = CLAIMS.replace('paper = 97.0\n', '').replace('runs = ["paper1/run_a", "paper1/run_b"]\n', '')
    text = text.replace('check = "value"', 'check = "flat"\nratio = 1.05') + CONTROLS
    root = make_repo(tmp_path, text)
    d = tmp_path / 'results' / 'paper1' / 'run_c'
    d.mkdir()
    (d / 'log.jsonl').write_text(json.dumps(dict(iter=100, val_acc=control_acc)) + '\n')
    return root


def test_a_contrast_needs_its_control_to_differ(tmp_path):
    """A 'flat' claim (96.5 and 99.0, within 5%) stands when its control is not flat beside them... and the control is
    judged on its own cells: one control cell at any value is flat, so two are needed to show a contrast; with
    the control as flat as the claim the verdict is refused."""
    root = control_repo(tmp_path / 'a', 0.5)
    c = C.measure(C.load('paper1', root))['claims'][0]
    assert C.holds(c)[0] is False and 'no contrast' in C.holds(c)[1]       # a single control cell is flat
    text = open(os.path.join(root, 'results', 'paper1', 'claims.toml')).read()
    text += '[[claim.cell]]\nlabel = "control 2"\ncontrol = true\nruns = ["paper1/run_d"]\n'
    open(os.path.join(root, 'results', 'paper1', 'claims.toml'), 'w').write(text)
    d = tmp_path / 'a' / 'results' / 'paper1' / 'run_d'
    d.mkdir()
    (d / 'log.jsonl').write_text(json.dumps(dict(iter=100, val_acc=0.9)) + '\n')
    assert C.holds(C.measure(C.load('paper1', root))['claims'][0]) == (True, '')
    (d / 'log.jsonl').write_text(json.dumps(dict(iter=100, val_acc=0.51)) + '\n')
    assert 'no contrast' in C.holds(C.measure(C.load('paper1', root))['claims'][0])[1]


def test_facts_are_read_from_the_log_and_the_command(tmp_path):
    """Planned steps from the run's train.py command (its config file, then its flags); the trend over the last
    fifth of the steps against a 1-point threshold; diverged from the val_loss; the short form of the table."""
    root = make_repo(tmp_path, CLAIMS.replace('steps = 100\n', '').replace('size = "paper"\n', ''))
    run = tmp_path / 'results' / 'paper1' / 'run_a'
    (tmp_path / 'config').mkdir()
    (tmp_path / 'config' / 'cpu').mkdir()
    (tmp_path / 'config' / 'cpu' / 'x.py').write_text('max_iters = 400\n')
    (run / 'command.sh').write_text('OMP_NUM_THREADS=1 python train.py config/cpu/x.py --seed=1\n')
    assert C.planned_steps(root, 'paper1/run_a') == 400
    (run / 'command.sh').write_text('python train.py config/cpu/x.py --max_iters=100 --seed=1\n')
    assert C.planned_steps(root, 'paper1/run_a') == 100
    rec = lambda i, acc, loss=1.0: dict(iter=i, val_acc=acc, val_loss=loss)
    assert C.trend([rec(0, .1), rec(80, .500), rec(100, .509)], 'val_acc', 100, True) == 'flat'
    assert C.trend([rec(0, .1), rec(80, .500), rec(100, .52)], 'val_acc', 100, True) == 'rising'
    assert C.trend([rec(0, .1), rec(90, .6), rec(100, .5)], 'val_acc', 100, True) == 'falling'
    assert C.trend([rec(0, .1), rec(100, .5)], 'val_acc', 100, True) == 'rising'   # the last two at least
    assert not C.diverged([rec(0, .1, 3.0), rec(100, .5, 1.0)])
    assert C.diverged([rec(0, .1, 0.5), rec(100, .5, 1.0)])                          # twice its minimum
    assert not C.diverged([rec(0, 1., 1e-5), rec(100, 1., 3e-5)])                     # noise at 100% accuracy
    assert C.diverged([rec(0, .1, float('nan'))])
    c = C.measure(C.load('paper1', root))['claims'][0]
    assert [f['size'] for f in c['cells'][0]['facts']] == ['cpu', 'cpu']
    assert C.facts_text(c) == '2 seeds, 100/100, rising, CPU size'
