"""
What reproduces: each paper's claims, results/paper<N>/claims.toml, read against the logs of the runs that test them.

A claim is a table or figure of the paper and its row: the paper's number, the runs that test it (folders under
results/), the metric and the step read from each run's log, the steps planned, and a verdict from a fixed
vocabulary. The generator computes `ours` from the logs (never typed), renders one Markdown table per paper and
rewrites the tables kept between marker comments (<!-- claims:paper1 --> ... <!-- /claims:paper1 --> in
docs/paper1.md, <!-- claims:all --> ... in README.md).

    python -m experiments.claims                  # every paper's table, printed
    python -m experiments.claims paper2           # one paper's
    python -m experiments.claims --write          # rewrite the tables in docs/paper*.md and README.md
    python -m experiments.claims --check          # exit 1 with a one-line reason when a table is stale or a claim
                                                  #   breaks a rule below (tests/test_claims.py runs it)

A claim's fields (a [[claim.cell]] inherits every field it does not set from its claim):
    id, where, claim, section   a slug, the paper's table or figure and row, the claim in a few words, and the
                                heading of docs/paper<N>.md that holds its evidence (an anchor, without '#')
    verdict, note               one of VERDICTS, and the reason in a few words
    paper                       the paper's number (or a word, for a figure that gives none)
    runs                        folders under results/; empty only for 'not run'
    file, metric, scale, step   where the number is: file in the run folder (log.jsonl: one record per evaluation,
                                with iter and val_* keys; results.json: one object; a text log), a key or a dotted
                                path into the record or object (see value()) or, for a text log, 're:<regex>' whose
                                group's matches are reduced by `reduce` (max, min or count; default max), a factor
                                (100 for accuracies, the default for val_acc and val_exact), and for log.jsonl the
                                record: 'last' (default), an iter, or 'min' / 'max' of the metric over the records
    steps                       the steps planned; a run whose last record is short of them is shown stopped
    label, digits, headline     a cell's name in the table, the decimals shown, and whether README's table has the
                                claim
    check, tolerance, expect    what 'reproduced' and 'reproduced at CPU size only' require (holds()):
      value     every cell: min(runs) - tolerance <= paper <= max(runs) + tolerance
      at_least  every cell: paper <= min(runs) + tolerance (each run reaches the paper's number; for claims that a
                model solves a task, where a higher number does not contradict the paper)
      expect    a cell's own condition on every run, e.g. expect = '< 50' (the paper gives no number, or the claim
                is that a model fails); with a numeric paper, the paper's number must meet it too
      order     the cells' means in the paper's order (the cells sorted by paper number)
      flat      max / min of the cells' means <= ratio;  rises: last cell's mean / first cell's mean >= ratio
    tolerance is in the metric's units, at most MAX_TOLERANCE points for a percentage and MAX_TOLERANCE_REL of
    the paper's number otherwise.
    control                     on a cell: the control of a contrast; left out of the check, and for 'flat' and
                                'rises' the check must fail on the control cells (else the contrast is not shown)
    size                        'paper' or 'cpu' (default: from the run's folder and command, run_size())
    data                        the other data a row ran on, when not the paper's (its verdict is capped)
    one_run                     the reason a CPU-size row stands on fewer than MIN_SEEDS runs a cell
    needs                       for a row not settled: what would settle it (runs, minutes, command), for the
                                ledger in results/README.md

The facts (facts(), per run, read from its log and command.sh; shown in the tables' facts column):
    steps     the last logged iter against the steps planned: the cell's `steps`, else the max_iters of the
              run's train.py command (config file and flags); 'finished' when it reached them
    trend     over the records of the last TREND_WINDOW of the run's steps: 'rising' / 'falling' when the metric
              moved by more than TREND_POINTS points (percentages) or TREND_REL of its value, else 'flat'
    diverged  a non-finite loss, or a last val_loss DIVERGE_FACTOR times its minimum or more and DIVERGE_NATS above it
    runs per cell, size, data

The rules (RULES; validate() refuses a verdict that its facts contradict, with one line naming the row and the
fact; results/README.md states them):
    not-reproduced-unsettled  'not reproduced' needs every run finished or flat
    reproduced-stopped        a 'reproduced' verdict needs finished runs, or an at_least check on the last record
    reproduced-size           'reproduced' needs the paper's size; smaller runs give 'reproduced at CPU size only'
    other-data                a row on other data than the paper's is at most 'inconclusive'
    no-expectation            a checked cell without a paper number needs an `expect`
    no-control                a 'flat' claim needs control cells with runs, and the contrast must show
    seeds                     a firm verdict at CPU size needs MIN_SEEDS runs per cell, or a `one_run` reason
"""

import argparse
import json
import math
import os
import re
import shlex
import statistics
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPERS = ('paper1', 'paper2', 'paper3')
VERDICTS = ('reproduced', 'reproduced at CPU size only', 'not reproduced', 'inconclusive', 'not run')
REPRODUCED = VERDICTS[:2]
CHECKS = ('value', 'at_least', 'expect', 'order', 'flat', 'rises')
MAX_TOLERANCE = 2.0             # points, for percentages
MAX_TOLERANCE_REL = 0.05        # of the paper's number, for other metrics
TREND_WINDOW = 0.2              # the last fifth of a run's steps
TREND_POINTS = 1.0              # points, for percentages: a smaller move is 'flat'
TREND_REL = 0.02                # of the metric's value, for other metrics
DIVERGE_FACTOR = 2.0            # a last val_loss this many times its minimum: diverged,
DIVERGE_NATS = 0.1              # and this far above it (1e-5 -> 3e-5 at 100% accuracy is noise, not divergence)
MIN_SEEDS = 3                   # runs per cell behind a firm verdict at CPU size
FIRM = ('reproduced', 'reproduced at CPU size only', 'not reproduced')
PERCENT = ('val_acc', 'val_exact')
README = 'README.md'


class ClaimError(ValueError):
    """A claims file that breaks a rule: its message is the one-line reason."""


# ----------------------------------------------------------------------------------------------------------------
# reading

def load(paper, root=ROOT):
    """results/<paper>/claims.toml as a dict: title, doc, claims (each with its cells, every field resolved)."""
    path = os.path.join(root, 'results', paper, 'claims.toml')
    with open(path, 'rb') as f:
        data = tomllib.load(f)
    claims = []
    for c in data.get('claim', []):
        cells = c.get('cell') or [{}]
        base = {k: v for k, v in c.items() if k != 'cell'}
        c = dict(base, cells=[dict(base, **cell) for cell in cells])
        for cell in c['cells']:
            cell.setdefault('runs', [])
            cell.setdefault('file', 'log.jsonl')
            cell.setdefault('metric', 'val_acc')
            cell.setdefault('scale', 100 if cell['metric'] in PERCENT else 1)
            cell.setdefault('step', 'last')
        claims.append(c)
    return dict(paper=paper, title=data.get('title', paper), doc=data.get('doc', f'docs/{paper}.md'),
                claims=claims, root=root)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def lookup(obj, path):
    """obj at a dotted path; a list takes an integer index ('U.10.0.2' is obj['U']['10'][0][2]), a dict the longest
    key that the path starts with (so 'ks.1.0.512' finds the key '1.0')."""
    while path:
        if isinstance(obj, list):
            key, _, path = path.partition('.')
            obj = obj[int(key)]
            continue
        keys = [k for k in obj if path == k or path.startswith(k + '.')]
        if not keys:
            raise KeyError(path)
        key = max(keys, key=len)
        obj, path = obj[key], path[len(key) + 1:]
    return obj


def offdiag(matrix):
    n = len(matrix)
    return [matrix[i][j] for i in range(n) for j in range(i + 1, n)]


def by_key(obj, path):
    """{key: value} of a dotted path with one '*' standing for every key of a dict: 'prune_drop.*.omniglot' is
    {head: obj['prune_drop'][head]['omniglot']}; a path without '*' must lead to a dict of numbers."""
    head, star, tail = path.partition('*')
    d = lookup(obj, head.rstrip('.'))
    return {k: lookup(v, tail.lstrip('.')) if tail else v for k, v in d.items()} if star else d


def value(obj, metric):
    """A metric of one record or results object: a dotted path; 'a - b'; 'max(a)', 'min(a)' of a list;
    'offdiag_corr(a, b)' (Pearson correlation of two square matrices' upper off-diagonal entries);
    'sign_agree(a, b, t)' (the fraction of a's upper off-diagonal entries with |a| > t that have b's sign);
    'offdiag_ratio(a)' (a square matrix's largest |off-diagonal| entry over its mean |diagonal| one);
    'corr(a, b)' (Pearson correlation of two {key: number} dicts over their common keys, by_key paths)."""
    depth, metric = 0, metric.strip()
    for i, ch in enumerate(metric):                 # 'a - b' at the top level, outside any call's parentheses
        depth += {'(': 1, ')': -1}.get(ch, 0)
        if depth == 0 and metric.startswith(' - ', i):
            return value(obj, metric[:i]) - value(obj, metric[i + 3:])
    m = re.fullmatch(r'(\w+)\((.*)\)', metric)
    if m:
        fn, args = m.group(1), [a.strip() for a in m.group(2).split(',')]
        if fn in ('max', 'min'):
            return (max if fn == 'max' else min)(lookup(obj, args[0]))
        if fn == 'corr':
            a, b = by_key(obj, args[0]), by_key(obj, args[1])
            keys = sorted(set(a) & set(b))
            return statistics.correlation([a[k] for k in keys], [b[k] for k in keys])
        if fn == 'offdiag_ratio':
            m = lookup(obj, args[0])
            diag = statistics.fmean(abs(m[i][i]) for i in range(len(m)))
            return max(abs(m[i][j]) for i in range(len(m)) for j in range(len(m)) if i != j) / diag
        a, b = offdiag(lookup(obj, args[0])), offdiag(lookup(obj, args[1]))
        if fn == 'offdiag_corr':
            return statistics.correlation(a, b)
        if fn == 'sign_agree':
            big = [(x, y) for x, y in zip(a, b) if abs(x) > float(args[2])]
            return sum((x > 0) == (y > 0) for x, y in big) / len(big)
        raise ClaimError(f"unknown metric function {fn!r} in {metric!r}")
    return lookup(obj, metric)


def read_run(root, run, cell):
    """(value, facts) of one run for a cell: the cell's metric, scaled, at the cell's step, and the run's facts()."""
    v, records = read_value(root, run, cell)
    return v, facts(root, run, cell, records)


def read_value(root, run, cell):
    """(value, the log's records or None): the cell's metric, scaled, at the cell's step."""
    path = os.path.join(root, 'results', run, cell['file'])
    if not os.path.isfile(path):
        raise ClaimError(f"results/{run}/{cell['file']}: missing")
    if cell['metric'].startswith('re:'):
        with open(path) as f:
            found = re.findall(cell['metric'][3:], f.read())
        if not found:
            raise ClaimError(f"results/{run}/{cell['file']}: nothing matches {cell['metric']!r}")
        reduce = cell.get('reduce', 'max')
        if reduce == 'count':
            return len(found) * cell['scale'], None
        return {'max': max, 'min': min}[reduce](float(x) for x in found) * cell['scale'], None
    if not cell['file'].endswith('.jsonl'):
        with open(path) as f:
            return value(json.load(f), cell['metric']) * cell['scale'], None
    records = [r for r in read_jsonl(path) if cell['metric'].split('.')[0] in r or '(' in cell['metric']]
    if not records:
        raise ClaimError(f"results/{run}/{cell['file']}: no record has {cell['metric']!r}")
    step = cell['step']
    if step == 'last':
        rec = records[-1]
    elif step in ('min', 'max'):
        rec = (min if step == 'min' else max)(records, key=lambda r: value(r, cell['metric']))
    else:
        hits = [r for r in records if r.get('iter') == step]
        if not hits:
            raise ClaimError(f"results/{run}/{cell['file']}: no record at iter {step}")
        rec = hits[-1]
    return value(rec, cell['metric']) * cell['scale'], records


def planned_steps(root, run):
    """The max_iters of the one train.py command in results/<run>/command.sh (its config files and flags), or
    None when there is no such command."""
    path = os.path.join(root, 'results', run, 'command.sh')
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        lines = [shlex.split(line, comments=True) for line in f]
    argvs = [words[words.index('train.py') + 1:] for words in lines if 'train.py' in words]
    if len(argvs) != 1:
        return None
    from configurator import train_keys
    argv = [a if a.startswith('-') else os.path.join(root, a) for a in argvs[0]]   # config paths: the repository's
    try:
        return train_keys(argv, max_iters=5000)['max_iters']       # train.py's own default
    except ValueError:
        return None


def run_size(root, run, cell):
    """'paper' or 'cpu': the cell's `size`, else 'paper' for a run under a folder named paper/ or made from a
    full-size config (config/<name>.py, not config/cpu/) or with --size=paper, else 'cpu'."""
    if 'size' in cell:
        return cell['size']
    if 'paper' in run.split('/')[1:]:
        return 'paper'
    path = os.path.join(root, 'results', run, 'command.sh')
    text = open(path).read() if os.path.isfile(path) else ''
    if '--size=paper' in text or re.search(r'train\.py\s+config/(?!cpu/)\S+\.py', text):
        return 'paper'
    return 'cpu'


def trend(records, metric, scale, percent):
    """'rising', 'falling' or 'flat': the metric's move over the records of the last TREND_WINDOW of the steps
    (at least the last two records), against TREND_POINTS (percent) or TREND_REL of its value; None with fewer
    than two records."""
    recs = [r for r in records if 'iter' in r]
    recs = [r for i, r in enumerate(recs) if i == len(recs) - 1 or recs[i + 1]['iter'] != r['iter']]
    if len(recs) < 2:
        return None
    last = recs[-1]['iter']
    window = [r for r in recs if r['iter'] >= (1 - TREND_WINDOW) * last]
    window = window if len(window) >= 2 else recs[-2:]
    a, b = (value(r, metric) * scale for r in (window[0], window[-1]))
    if not all(map(math.isfinite, (a, b))):
        return None
    threshold = TREND_POINTS if percent else TREND_REL * max(abs(a), abs(b))
    return 'rising' if b - a > threshold else 'falling' if a - b > threshold else 'flat'


def diverged(records):
    """A non-finite loss in the log, or a last val_loss DIVERGE_FACTOR times its minimum or more and at least
    DIVERGE_NATS above it."""
    losses = [r[k] for r in records for k in ('val_loss', 'train_loss', 'loss') if numeric(r.get(k))]
    if any(not math.isfinite(x) for x in losses):
        return True
    val = [r['val_loss'] for r in records if numeric(r.get('val_loss'))]
    return bool(val) and min(val) > 0 and val[-1] >= DIVERGE_FACTOR * min(val) and val[-1] - min(val) >= DIVERGE_NATS


def facts(root, run, cell, records):
    """{'done', 'planned', 'finished', 'trend', 'diverged', 'size', 'cpu_s'} of one run for a cell (see the module's
    docstring); done, planned, trend are None where the log has no steps."""
    percent = cell['scale'] == 100 or cell.get('unit') == '%'
    metric_ok = records is not None and not cell['metric'].startswith('re:')
    series = [r for r in records or [] if cell['metric'].split('.')[0] in r or '(' in cell['metric']]
    done = series[-1].get('iter') if series else None
    planned = cell.get('steps') or (planned_steps(root, run) if done is not None else None)
    cpu_s = records[-1].get('cpu_s') if records else None
    cpu_file = os.path.join(root, 'results', run, 'cpu_s.txt')     # a train.py run's, measured around it
    if cpu_s is None and os.path.isfile(cpu_file):
        with open(cpu_file) as f:
            cpu_s = float(f.read().split()[0])
    return dict(done=done, planned=planned, cpu_s=cpu_s,
                finished=done is None or planned is None or done >= planned,
                trend=trend(series, cell['metric'], cell['scale'], percent) if metric_ok and series else None,
                diverged=diverged(records or []), size=run_size(root, run, cell))


def measure(claims):
    """Every cell's values and its runs' facts, in place (cell['values'], cell['facts'], cell['iters'])."""
    for c in claims['claims']:
        for cell in c['cells']:
            got = [read_run(claims['root'], run, cell) for run in cell['runs']]
            cell['values'] = [v for v, _ in got]
            cell['facts'] = [f for _, f in got]
            cell['iters'] = [f['done'] for f in cell['facts']]
    return claims


# ----------------------------------------------------------------------------------------------------------------
# the rules

def meets(x, condition):
    """x against a condition such as '< 50', '>= 90', 'abs < 2'."""
    m = re.fullmatch(r'\s*(abs\s+)?(<=|>=|<|>)\s*(-?[\d.]+(?:e-?\d+)?)\s*', condition)
    if not m:
        raise ClaimError(f"bad expect {condition!r}")
    x = abs(x) if m.group(1) else x
    bound = float(m.group(3))
    return {'<': x < bound, '<=': x <= bound, '>': x > bound, '>=': x >= bound}[m.group(2)]


def numeric(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_cells(c, cells):
    """(True, '') when cells show what the claim's check asks; else (False, the reason)."""
    check = c.get('check', 'value')
    for cell in cells:
        lo, hi, paper = min(cell['values']), max(cell['values']), cell.get('paper')
        tol = cell.get('tolerance', 0.0)
        label = cell.get('label', c['id'])
        if 'expect' in cell:
            bad = [v for v in cell['values'] if not meets(v, cell['expect'])]
            if bad:
                return False, f"{label}: {bad[0]:.4g} does not meet {cell['expect']!r}"
            if numeric(paper) and not meets(paper, cell['expect']):
                return False, f"{label}: the paper's {paper} does not meet {cell['expect']!r}"
        elif check == 'value' and numeric(paper) and not lo - tol <= paper <= hi + tol:
            return False, f"{label}: the paper's {paper} is outside [{lo - tol:.4g}, {hi + tol:.4g}]"
        elif check == 'at_least' and numeric(paper) and paper > lo + tol:
            return False, f"{label}: a run ({lo:.4g}) is short of the paper's {paper} by more than {tol}"
    means = [statistics.fmean(cell['values']) for cell in cells]
    if check == 'order':
        ranked = [cell for cell in cells if numeric(cell.get('paper'))]
        by_paper = sorted(range(len(ranked)), key=lambda i: ranked[i]['paper'])
        by_ours = sorted(range(len(ranked)), key=lambda i: statistics.fmean(ranked[i]['values']))
        if by_paper != by_ours:
            return False, 'the runs do not order the cells as the paper does'
    if check == 'flat' and max(means) / min(means) > c['ratio']:
        return False, f"max / min = {max(means) / min(means):.3g} > {c['ratio']}"
    if check == 'rises' and means[-1] / means[0] < c['ratio']:
        return False, f"last / first = {means[-1] / means[0]:.3g} < {c['ratio']}"
    return True, ''


def holds(c):
    """(True, '') when the runs show what the paper claims, by the claim's check, and its control cells show the
    contrast; else (False, the reason)."""
    cells = [cell for cell in c['cells'] if cell['values'] and not cell.get('control')]
    if not cells:
        return False, 'no runs'
    ok, why = check_cells(c, cells)
    if not ok:
        return ok, why
    controls = [cell for cell in c['cells'] if cell.get('control')]
    if c.get('check') in ('flat', 'rises') and controls:
        if not all(cell['values'] for cell in controls):
            return False, 'a control cell has no runs'
        if check_cells(c, controls)[0]:
            return False, f"the control ({controls[0].get('label', '?')}) is {c['check']} too: no contrast"
    return True, ''


def rule_not_reproduced_unsettled(c, runs):
    if c['verdict'] == 'not reproduced':
        for run, f in runs:
            if not f['finished'] and f['trend'] not in ('flat', None):
                return f"results/{run} stopped at {f['done']:,} of {f['planned']:,} steps, {f['trend']}"


def rule_reproduced_stopped(c, runs):
    if c['verdict'] in REPRODUCED:
        kept = c.get('check', 'value') == 'at_least' and all(cell['step'] == 'last' for cell in c['cells'])
        for run, f in runs:
            if not f['finished'] and not kept:
                return f"results/{run} stopped at {f['done']:,} of {f['planned']:,} steps"


def rule_reproduced_size(c, runs):
    if c['verdict'] == 'reproduced':
        small = [run for run, f in runs if f['size'] != 'paper']
        if small:
            return f"results/{small[0]} is smaller than the paper's setting: 'reproduced at CPU size only'"


def rule_other_data(c, runs):
    if c.get('data') and c['verdict'] not in ('inconclusive', 'not run'):
        return f"it ran on other data ({c['data']}): at most 'inconclusive'"


def rule_no_expectation(c, runs):
    if c['verdict'] in REPRODUCED and c.get('check', 'value') in ('value', 'at_least'):
        for cell in c['cells']:
            if cell['runs'] and not cell.get('control') and 'expect' not in cell and not numeric(cell.get('paper')):
                return f"cell {cell.get('label', '?')!r} has no paper number and no expect"


def rule_no_control(c, runs):
    if c['verdict'] in REPRODUCED and c.get('check') == 'flat':
        if not any(cell.get('control') and cell['runs'] for cell in c['cells']):
            return "a 'flat' claim needs control cells with runs (control = true)"


def rule_seeds(c, runs):
    if c['verdict'] in FIRM and not c.get('one_run') and any(f['size'] == 'cpu' for _, f in runs):
        for cell in c['cells']:
            if 0 < len(cell['runs']) < MIN_SEEDS:
                return (f"cell {cell.get('label', '?')!r} has {len(cell['runs'])} run(s) at CPU size, fewer than "
                        f"{MIN_SEEDS} (or give one_run = the reason)")


RULES = {'not-reproduced-unsettled': rule_not_reproduced_unsettled, 'reproduced-stopped': rule_reproduced_stopped,
         'reproduced-size': rule_reproduced_size, 'other-data': rule_other_data,
         'no-expectation': rule_no_expectation, 'no-control': rule_no_control, 'seeds': rule_seeds}


def validate(claims):
    """Raise ClaimError (its message one line) at the first claim that breaks a rule (problems())."""
    for problem in problems(claims):
        raise ClaimError(problem)


def problems(claims):
    """One line for every claim that breaks a rule: an unknown verdict or check, a missing run, a run listed for
    'not run' or none for another verdict, a tolerance that is not small, a repeated id, a 'reproduced' verdict
    whose runs do not show the paper's number (holds()), or a verdict its runs' facts contradict (RULES)."""
    out, seen = [], set()
    for c in claims['claims']:
        try:
            check_claim(claims, c, seen)
        except ClaimError as e:
            out.append(str(e))
    return out


def check_claim(claims, c, seen):
    """Raise ClaimError naming the claim and the first rule it breaks."""
    paper = claims['paper']
    where = f"results/{paper}/claims.toml, claim {c.get('id', '?')!r}"
    for key in ('id', 'where', 'claim', 'verdict', 'section'):
        if key not in c:
            raise ClaimError(f"{where}: no {key}")
    if c['id'] in seen:
        raise ClaimError(f"{where}: the id is used twice")
    seen.add(c['id'])
    if c['verdict'] not in VERDICTS:
        raise ClaimError(f"{where}: verdict {c['verdict']!r} is not one of {', '.join(VERDICTS)}")
    if c.get('check', 'value') not in CHECKS:
        raise ClaimError(f"{where}: check {c['check']!r} is not one of {', '.join(CHECKS)}")
    runs = [run for cell in c['cells'] for run in cell['runs']]
    if (c['verdict'] == 'not run') != (not runs):
        raise ClaimError(f"{where}: 'not run' and only it lists no runs")
    if c['verdict'] != 'reproduced' and 'note' not in c:
        raise ClaimError(f"{where}: a verdict other than 'reproduced' needs a note")
    for run in runs:
        if not os.path.isdir(os.path.join(claims['root'], 'results', run)):
            raise ClaimError(f"{where}: results/{run} is missing")
    for cell in c['cells']:
        tol, number = cell.get('tolerance', 0.0), cell.get('paper')
        limit = MAX_TOLERANCE if cell['scale'] == 100 or cell.get('unit') == '%' else \
            MAX_TOLERANCE_REL * abs(number) if numeric(number) else 0.0
        if tol > limit:
            raise ClaimError(f"{where}: tolerance {tol} is above {limit:.3g}")
    facts_ = [(run, f) for cell in c['cells'] for run, f in zip(cell['runs'], cell.get('facts', []))]
    for name, rule in RULES.items():
        why = rule(c, facts_)
        if why:
            raise ClaimError(f"{where}: verdict {c['verdict']!r} but {why} [{name}]")
    if c['verdict'] in REPRODUCED:
        ok, why = holds(c)
        if not ok:
            raise ClaimError(f"{where}: verdict {c['verdict']!r} but {why}")


# ----------------------------------------------------------------------------------------------------------------
# rendering

def fmt(x, digits):
    """x with `digits` decimals, or in e-notation when it is below 1e-3 in magnitude (and not 0)."""
    s = f"{x:.1e}" if 0 < abs(x) < 1e-3 else f"{x:,.{digits}f}"
    return s.replace('-', '−')


def fmt_paper(x, digits):
    if not numeric(x):
        return str(x)
    s = f"{x:g}" if abs(x) < 1e5 else f"{x:,}"
    return s.replace('-', '−')


def cell_text(cell):
    """A cell's values as the table shows them: one value; two as 'a, b'; more as 'min–max (n runs)'."""
    vals, digits = cell['values'], cell.get('digits', 1)
    if not vals:
        return '—'
    if len(vals) <= 2:
        return ', '.join(fmt(v, digits) for v in vals)
    if fmt(min(vals), digits) == fmt(max(vals), digits):
        return f"{fmt(min(vals), digits)} ({len(vals)} runs)"
    return f"{fmt(min(vals), digits)}–{fmt(max(vals), digits)} ({len(vals)} runs)"


def stopped(cells):
    """'at <iters> of <steps> steps' for the runs that stopped short of the steps their cell planned, or ''."""
    out = []
    for steps in dict.fromkeys(cell['steps'] for cell in cells if cell.get('steps')):
        iters = [i for cell in cells if cell.get('steps') == steps for i in cell['iters'] if i is not None]
        if iters and min(iters) < steps:
            lo, hi = min(iters), max(iters)
            out.append(f"at {lo:,}{'' if lo == hi else f'–{hi:,}'} of {steps:,} steps")
    return '; '.join(out)


def kilo(n):
    """10000 -> '10k', 1500 -> '1.5k', 150 -> '150'."""
    return f"{n / 1000:g}k" if n >= 1000 else f"{n:g}"


def facts_text(c):
    """A row's facts in the fixed short form: runs per cell, the least complete run's steps done / planned, the
    trend (rising if any run rises, else falling if any falls, else flat), diverged, size, other data; e.g.
    '3 seeds, 10k/10k, flat, CPU size'."""
    cells = [cell for cell in c['cells'] if cell['runs']]
    if not cells:
        return '—'
    every = [f for cell in cells for f in cell['facts']]
    n = sorted({len(cell['runs']) for cell in cells})
    out = [f"{n[0]}{'' if len(n) == 1 else f'–{n[-1]}'} seed{'s' if n[-1] > 1 else ''}"]
    steps = [f for f in every if f['done'] is not None and f['planned']]
    if steps:
        f = min(steps, key=lambda f: f['done'] / f['planned'])
        out.append(f"{kilo(f['done'])}/{kilo(f['planned'])}")
    trends = {f['trend'] for f in every}
    out += [t for t in ('rising', 'falling', 'flat') if t in trends][:1]
    out += ['diverged'] * any(f['diverged'] for f in every)
    sizes = {f['size'] for f in every}
    out.append('paper size' if sizes == {'paper'} else 'CPU size' if sizes == {'cpu'} else 'both sizes')
    out += ['other data'] * bool(c.get('data'))
    return ', '.join(out)


def row(c, link):
    labelled = any('label' in cell for cell in c['cells'])
    planned = [cell for cell in c['cells'] if cell.get('steps')]
    texts = []
    for cell in c['cells']:
        text = (f"{cell['label']}: " if 'label' in cell else '') + cell_text(cell)
        if len(planned) == 1 and cell is planned[0] and stopped([cell]):
            text += f" ({stopped([cell])})"             # the one cell with a schedule: say it there
        texts.append(text)
    ours = '; '.join(texts)
    if len(planned) > 1 and stopped(planned):
        ours += f" ({stopped(planned)})"
    papers = [fmt_paper(cell['paper'], cell.get('digits', 1)) for cell in c['cells'] if 'paper' in cell]
    if len(set(papers)) == 1:
        paper = papers[0]
    else:
        paper = '; '.join(papers) if labelled and any(' / ' in p for p in papers) else ' / '.join(papers)
    verdict = f"**{c['verdict']}**" + (f": {c['note']}" if c.get('note') else '')
    cells = [f"[{c['where']}]({link}#{c['section']}): {c['claim']}", paper or '—', ours, facts_text(c), verdict]
    return '| ' + ' | '.join(x.replace('|', '\\|') for x in cells) + ' |'


def counts(claims):
    n = {v: 0 for v in VERDICTS}
    for c in claims['claims']:
        n[c['verdict']] += 1
    return n


def counts_line(claims):
    n = counts(claims)
    return f"{len(claims['claims'])} claims: " + ', '.join(f"{k} {v}" for k, v in n.items() if v)


def render(claims, link=''):
    """A paper's table: claim | paper | ours | facts | verdict, then the counts per verdict."""
    lines = ['| claim | paper | ours | facts | verdict |', '|---|---|---|---|---|']
    lines += [row(c, link) for c in claims['claims']]
    return '\n'.join(lines + ['', counts_line(claims) + '.'])


def render_readme(all_claims):
    """README's table: each paper's headline claims (headline = true), one line each, verdict only; then each
    paper's counts per verdict over all its claims."""
    lines = ['| claim | paper | ours | facts | verdict |', '|---|---|---|---|---|']
    for claims in all_claims:
        n = claims['paper'][-1]
        for c in claims['claims']:
            if c.get('headline'):
                r = row(dict(c, note='', where=f"P{n} {c['where']}"), claims['doc'])
                lines.append(r)
    lines.append('')
    for claims in all_claims:
        lines.append(f"- [{claims['title']}]({claims['doc']}): {counts_line(claims)}.")
    return '\n'.join(lines)


# ----------------------------------------------------------------------------------------------------------------
# the tables in the docs

def block(text, name):
    """(start, end) of the text between <!-- claims:name --> and <!-- /claims:name -->, or None."""
    start, end = f'<!-- claims:{name} -->', f'<!-- /claims:{name} -->'
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        return None
    return i + len(start), j


def cpu_minutes(c):
    """The CPU minutes in a row's logs (the cpu_s of each run's last record, where it has one), or None."""
    secs = [f['cpu_s'] for cell in c['cells'] for f in cell['facts'] if f.get('cpu_s') is not None]
    return sum(secs) / 60 if secs else None


def render_ledger(all_claims):
    """results/README.md's ledger: every row that is not settled (inconclusive, not run), with the CPU minutes its
    logs hold and what would settle it (its `needs`: runs, minutes, the command or the GPU plan's step)."""
    lines = ['| row | verdict | CPU min in its logs | what would settle it |', '|---|---|---|---|']
    for claims in all_claims:
        for c in claims['claims']:
            if c['verdict'] in ('inconclusive', 'not run'):
                spent = cpu_minutes(c)
                lines.append(f"| {claims['paper']} `{c['id']}` | {c['verdict']} | "
                             f"{'—' if spent is None else f'{spent:,.0f}'} | {c.get('needs', '—')} |")
    return '\n'.join(lines)


def targets(all_claims):
    """[(file, marker name, rendered table)] for every table kept in the docs."""
    out = [(c['doc'], c['paper'], render(c)) for c in all_claims]
    if len(all_claims) == len(PAPERS):
        out.append((README, 'all', render_readme(all_claims)))
        out.append(('results/README.md', 'ledger', render_ledger(all_claims)))
    return out


def stale(root, all_claims):
    """The first table in the docs that differs from its rendering, as a one-line reason, or None."""
    for doc, name, table in targets(all_claims):
        with open(os.path.join(root, doc)) as f:
            text = f.read()
        span = block(text, name)
        if span is None:
            return f"{doc}: no <!-- claims:{name} --> ... <!-- /claims:{name} --> block"
        if text[span[0]:span[1]].strip('\n') != table:
            return f"{doc}: the claims table differs from the logs' (python -m experiments.claims --write)"
    return None


def write(root, all_claims):
    """Rewrite every table in the docs in place; returns the files changed."""
    changed = []
    for doc, name, table in targets(all_claims):
        path = os.path.join(root, doc)
        with open(path) as f:
            text = f.read()
        span = block(text, name)
        if span is None:
            raise ClaimError(f"{doc}: no <!-- claims:{name} --> ... <!-- /claims:{name} --> block")
        new = text[:span[0]] + '\n' + table + '\n' + text[span[1]:]
        if new != text:
            with open(path, 'w') as f:
                f.write(new)
            changed.append(doc)
    return changed


def load_all(papers=PAPERS, root=ROOT, check=True):
    """Every paper's claims, read and measured; raises ClaimError on the first broken claim unless check=False."""
    all_claims = [measure(load(p, root)) for p in papers]
    for claims in all_claims if check else ():
        validate(claims)
    return all_claims


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument('papers', nargs='*', default=list(PAPERS), help='paper1, paper2, paper3 (default: all)')
    ap.add_argument('--write', action='store_true', help='rewrite the tables in docs/paper*.md and README.md')
    ap.add_argument('--check', action='store_true', help='exit 1 when a table there is stale or a claim broken')
    ap.add_argument('--root', default=ROOT, help='the repository (default: this one)')
    args = ap.parse_args(argv)
    for p in args.papers:
        if p not in PAPERS:
            ap.error(f"unknown paper {p!r}: one of {', '.join(PAPERS)}")
    try:
        all_claims = load_all(args.papers, args.root, check=False)
        broken = [line for claims in all_claims for line in problems(claims)]
        if broken:
            print('\n'.join(broken))
            return 1
        if args.write:
            for doc in write(args.root, all_claims):
                print(f"wrote {doc}")
        elif args.check:
            reason = stale(args.root, all_claims)
            if reason:
                print(reason)
                return 1
            print(f"claims tables current: {', '.join(counts_line(c) for c in all_claims)}")
        else:
            for claims in all_claims:
                print(f"## {claims['title']}\n\n{render(claims, claims['doc'])}\n")
    except (ValueError, OSError, KeyError, IndexError, tomllib.TOMLDecodeError) as e:
        print(f"{type(e).__name__}: {e}" if not isinstance(e, ClaimError) else str(e))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
