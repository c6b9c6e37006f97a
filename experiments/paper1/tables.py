"""
The CPU-scale tables of docs/paper1.md, regenerated from the runs committed under results/paper1/.

Every run is a folder results/paper1/<task>_<variant>[_<detail>]/ holding log.jsonl (train.py's evaluations;
the last record is the reported result), command.sh (the command that made it) and, for k-hop and Dyck-1,
breakdown.json (experiments/paper1/breakdown.py on the run's final checkpoint). Paper 1's numbers are printed
beside ours; under memorization's runs, each setting run with several seeds (<run>, <run>_seed2, ...) gets a row
of its seeds with their mean and standard deviation.

    python -m experiments.paper1.tables        # every table, as markdown
    python -m experiments.paper1.tables khop   # one task
    python -m experiments.paper1.tables --plot=assets/paper1_breakdowns.png   # k-hop per k and Dyck-1 per length
"""

import json
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, 'results', 'paper1')      # the runs' folders
VARIANTS = ('standard', 'frozen_qk', 'frozen_mlp', 'mixit')
TASKS = ('decimal_addition', 'memorization', 'retrieval', 'modular_addition', 'dyck1', 'khop')

# paper 1 (Dong, Noci, Khodak, Li 2025): Table 1 (k-hop, retrieval), Tables 3 and 10 (decimal addition, Dyck-1,
# modular addition),
# Table 4 (memorization accuracy and bits per parameter at width 128)
PAPER = {
    'dyck1': dict(standard=95.80, frozen_qk=97.38, frozen_mlp=95.92, mixit=96.17),
    'decimal_addition': dict(standard=98.58, frozen_qk=100.0, frozen_mlp=99.91, mixit=100.0),
    'khop': dict(standard=99.99, frozen_qk=96.73, frozen_mlp=99.89, mixit=48.58),
    'retrieval': dict(standard=100.0, frozen_qk=97.01, frozen_mlp=100.0, mixit=11.24),
    'modular_addition': dict(standard=100.0, frozen_qk=100.0, frozen_mlp=100.0, mixit=100.0),
    'memorization': dict(standard=(100.0, 2.98), frozen_qk=(69.0, 2.25), frozen_mlp=(19.0, 1.13),
                         mixit=(67.0, 2.18)),
}


def parse_name(name):
    """(task, variant, detail) of a run folder's name, or None when it names no known task and variant."""
    for task in TASKS:
        if name.startswith(task + '_'):
            rest = name[len(task) + 1:]
            for variant in VARIANTS:
                if rest == variant or rest.startswith(variant + '_'):
                    return task, variant, rest[len(variant) + 1:]
    return None


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def runs(root=RESULTS):
    """Every run under root: dicts with name, task, variant, detail, final (the last log record), log (all
    records), command and breakdown (or None), in task order, then variant order, then name."""
    out = []
    for name in sorted(os.listdir(root)):
        parsed = parse_name(name)
        log = os.path.join(root, name, 'log.jsonl')
        if parsed is None or not os.path.isfile(log):
            continue
        records = read_jsonl(log)
        if not records:
            continue
        command = open(os.path.join(root, name, 'command.sh')).read().strip() \
            if os.path.isfile(os.path.join(root, name, 'command.sh')) else ''
        bd = os.path.join(root, name, 'breakdown.json')
        breakdown = json.load(open(bd)) if os.path.isfile(bd) else None
        task, variant, detail = parsed
        out.append(dict(name=name, task=task, variant=variant, detail=detail, final=records[-1], log=records,
                        command=command, breakdown=breakdown))
    order = lambda r: (TASKS.index(r['task']), VARIANTS.index(r['variant']), r['detail'])
    return sorted(out, key=order)


def pct(v):
    return '—' if v is None else f"{100 * v:.2f}"


def best(run, key):
    """(value, iter) of the best record of key in the run's log."""
    rec = max(run['log'], key=lambda r: r.get(key, float('-inf')))
    return rec.get(key), rec['iter']


def table(header, rows):
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(str(c) for c in row) + ' |' for row in rows]
    return '\n'.join(lines)


def dyck1_table(rs):
    rows = []
    for r in rs:
        f, bd = r['final'], r['breakdown']
        by_len = {row['length']: row for row in bd['rows']} if bd else {}
        trained = [row for row in (bd['rows'] if bd else []) if row['length'] in ('11-20', '21-30', '31-40')]
        n_trained = max(sum(row['strings'] for row in trained), 1)
        tr_acc = sum(row['acc'] * row['strings'] for row in trained) / n_trained if trained else None
        tr_cnt = sum(row['counting'] * row['strings'] for row in trained) / n_trained if trained else None
        rows.append([r['name'], f['iter'], pct(f['val_acc']), pct(by_len.get('all', {}).get('counting')),
                     pct(tr_acc), pct(tr_cnt), f"{PAPER['dyck1'][r['variant']]:.2f}"])
    return table(['run', 'steps', 'test acc %', 'counting baseline %', 'acc, lengths 11-40 %',
                  'counting, lengths 11-40 %', 'paper %'], rows)


def decimal_table(rs):
    def per_digit(r):               # accuracy of each answer digit, least-significant first (breakdown.json)
        rows = r['breakdown']['rows'] if r['breakdown'] else []
        return ' / '.join(f"{100 * row['acc']:.0f}" for row in rows if row['digit'] != 'all') or ''
    rows = [[r['name'], r['final']['iter'], pct(r['final']['val_acc']), pct(r['final'].get('val_exact')),
             per_digit(r), f"{PAPER['decimal_addition'][r['variant']]:.2f}"] for r in rs]
    return table(['run', 'steps', 'digit acc %', 'whole-sum acc %', 'per answer digit %, first to last',
                  'paper % (10 digits)'], rows)


def khop_table(rs):
    ks = sorted({row['k'] for r in rs if r['breakdown'] for row in r['breakdown']['rows'] if row['k'] != 'all'})
    rows = []
    for r in rs:
        by_k = {row['k']: row for row in r['breakdown']['rows']} if r['breakdown'] else {}
        cells = [f"{pct(by_k[k]['acc'])} ({pct(by_k[k]['copy_rate'])})" if k in by_k else '—' for k in ks]
        rows.append([r['name'], r['final']['iter'], pct(r['final']['val_acc'])] + cells +
                    [pct(by_k['all']['copy_rate']) if 'all' in by_k else '—', f"{PAPER['khop'][r['variant']]:.2f}"])
    return table(['run', 'steps', 'test acc %'] + [f'k = {k}: acc (copy) %' for k in ks] +
                 ['copy rate, all k %', 'paper % (k ≤ 16)'], rows)


def bits_per_param(record):
    """A memorization log record's bits per trainable parameter, val_bits_per_param (the logs in results/paper1
    name it bits_per_param); None where it has none."""
    return record.get('val_bits_per_param', record.get('bits_per_param'))


def memorization_table(rs):
    rows = []
    for r in rs:
        f = r['final']
        acc, bpp = f['val_acc'], bits_per_param(f)
        params = None
        if bpp:
            # bits_per_param = log2(n_keys) n_keys^2 acc / trainable: the trainable count follows from one record
            params = round(_stored_bits(r) * acc / bpp) if _stored_bits(r) else None
        pa, pb = PAPER['memorization'][r['variant']]
        rows.append([r['name'], f['iter'], f"{params:,}" if params else '—', pct(acc),
                     f"{bpp:.2f}" if bpp is not None else '—', f"{pa:.0f}", f"{pb:.2f}"])
    out = table(['run', 'steps', 'trainable params', 'train acc %', 'bits/param', 'paper acc %',
                 'paper bits/param'], rows)
    seeds = memorization_seeds_table(rs)
    return out + '\n\n' + seeds if seeds else out


DEFAULT_SEED = 1337              # train.py's seed where a command sets none


def seed_of(run):
    """The run's --seed (DEFAULT_SEED where its command sets none)."""
    flags = [w for w in run['command'].split() if w.startswith('--seed=')]
    return int(flags[-1].split('=', 1)[1]) if flags else DEFAULT_SEED


def memorization_seeds_table(rs):
    """The settings run with more than one seed (runs named alike but for a trailing _seed<n>): each seed's
    accuracy and bits per parameter (train.py's default seed first), and their mean and sample standard
    deviation; '' when there are none."""
    groups = {}                     # (setting, variant's index) -> [(seed, final record)]
    for r in rs:
        setting = re.sub(r'(^|_)seed\d+$', '', r['detail'])
        groups.setdefault((setting, VARIANTS.index(r['variant'])), []).append((seed_of(r), r['final']))
    spread = lambda xs: f"{statistics.mean(xs):.2f} ± {statistics.stdev(xs):.2f}"
    rows = []
    for (setting, v), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        group.sort(key=lambda sf: (sf[0] != DEFAULT_SEED, sf[0]))          # the default first
        acc = [100 * final['val_acc'] for _, final in group]
        bpp = [bits_per_param(final) for _, final in group]
        rows.append([VARIANTS[v], setting or '—', ', '.join(str(seed) for seed, _ in group),
                     ' / '.join(f"{a:.2f}" for a in acc), spread(acc), ' / '.join(f"{b:.2f}" for b in bpp),
                     spread(bpp)])
    if not rows:
        return ''
    return table(['variant', 'setting', 'seeds', 'train acc %, each seed', 'mean ± sd', 'bits/param, each seed',
                  'mean ± sd'], rows)


def _stored_bits(run):
    """log2(n) n^2 for the run's memorization_n_keys (from its command, else the default 512)."""
    import math
    n = 512
    for part in run['command'].split():
        if part.startswith('--memorization_n_keys='):
            n = int(part.split('=', 1)[1])
    cfg = [p for p in run['command'].split() if p.endswith('.py') and p.startswith('config/')]
    if cfg and n == 512:
        path = os.path.join(ROOT, cfg[0])
        if os.path.isfile(path):
            for line in open(path):
                if line.split('#')[0].replace(' ', '').startswith('memorization_n_keys='):
                    n = int(line.split('=')[1].split('#')[0])
    return math.log2(n) * n * n


def accuracy_table(task, paper_setting):
    """The table of a task whose runs report test accuracy only: final and best, beside the paper's."""
    def make(rs):
        rows = []
        for r in rs:
            b, it = best(r, 'val_acc')
            rows.append([r['name'], r['final']['iter'], pct(r['final']['val_acc']), f"{pct(b)} (step {it})",
                         f"{PAPER[task][r['variant']]:.2f}"])
        return table(['run', 'steps', 'test acc %', 'best %', f'paper % ({paper_setting})'], rows)
    return make


TABLES = dict(dyck1=('Dyck-1', dyck1_table), decimal_addition=('Decimal addition', decimal_table),
              khop=('k-hop', khop_table), memorization=('Memorization', memorization_table),
              retrieval=('Retrieval', accuracy_table('retrieval', 'V = 256, m_max = 30')),
              modular_addition=('Modular addition', accuracy_table('modular_addition', 'p = 599')))


def plot(path):
    """Two panels from the breakdown.json files: k-hop accuracy per k beside the copy rate, and Dyck-1
    accuracy per string length beside the counting baseline and the share of each length never trained on."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    rs = [r for r in runs() if r['breakdown'] and not r['detail']]
    colors = dict(standard='C0', frozen_qk='C1', frozen_mlp='C2', mixit='C3')
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.6))
    kh = [r for r in rs if r['task'] == 'khop']
    if kh:
        ks = [row['k'] for row in kh[0]['breakdown']['rows'] if row['k'] != 'all']
        w = 0.8 / (len(kh) + 1)
        for i, r in enumerate(kh):
            acc = [row['acc'] * 100 for row in r['breakdown']['rows'] if row['k'] != 'all']
            a.bar([k + (i - len(kh) / 2) * w for k in ks], acc, w, label=r['variant'], color=colors[r['variant']])
        copy = [row['copy_rate'] * 100 for row in kh[0]['breakdown']['rows'] if row['k'] != 'all']
        a.bar([k + (len(kh) / 2) * w for k in ks], copy, w, label='copy current character', color='0.6')
        a.set_xticks(ks)
        a.set_xlabel('k (hops)')
        a.set_ylabel('test accuracy %')
        a.set_title('k-hop, CPU scale')
        a.legend(fontsize=7, loc='upper center', bbox_to_anchor=(0.5, -0.17), ncol=3)
    dy = [r for r in rs if r['task'] == 'dyck1']
    if dy:
        rows0 = [row for row in dy[0]['breakdown']['rows'] if row['length'] != 'all']
        x = range(len(rows0))
        for r in dy:
            b.plot(x, [row['acc'] * 100 for row in r['breakdown']['rows'] if row['length'] != 'all'], 'o-',
                   label=r['variant'], color=colors[r['variant']])
        b.plot(x, [row['counting'] * 100 for row in rows0], 'k--', label='counting baseline')
        b.bar(x, [row['untrained'] * 100 for row in rows0], 0.6, color='0.85', label='% of stream never trained',
              zorder=0)
        b.set_xticks(list(x), [row['length'] for row in rows0])
        b.set_xlabel('string length')
        b.set_ylabel('%')
        b.set_title('Dyck-1 (authors\' format), CPU scale')
        b.legend(fontsize=7, loc='upper center', bbox_to_anchor=(0.5, -0.17), ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(which=()):
    rs = runs()
    for task in TASKS:
        if which and task not in which:
            continue
        mine = [r for r in rs if r['task'] == task]
        if not mine:
            continue
        title, fn = TABLES[task]
        print(f"### {title}\n\n{fn(mine)}\n")


if __name__ == '__main__':
    plots = [a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--plot=')]
    names = [a for a in sys.argv[1:] if not a.startswith('--plot=')]
    unknown = [a for a in names if a not in TASKS]
    if unknown:
        raise SystemExit(f"error: unknown task {unknown[0]!r}; choose from {', '.join(TASKS)}")
    if plots:
        plot(plots[0])
    else:
        main(names)
