"""
The speed stage's comparisons read back (`bash experiments/gpu/run.sh speed`: bench.py at one shape in several
settings, all in one call, one JSON each in its folder): every setting's step beside the default compiled one
measured in the same call, beside Hugging Face's Llama (timed in the default's run), and its losses beside the
eager step's; then the best setting's numbers against the speed targets (TARGETS).

    python -m experiments.gpu.speed out/gpu/speed            # the tables (markdown)
    python -m experiments.gpu.speed out/gpu/speed --best     # the fastest compile mode and AdamW as bench.py flags

The settings are the JSONs' names: eager.json (--compile=False: the losses' reference), default.json (torch's
default compile and the fused AdamW, with --against=hf), and any others (a compile mode, the foreach AdamW, the
best of them again). `loss vs eager` is the largest relative difference between a model's loss and the eager
step's over the timed steps (the same initial weights and batches: a step that computes the same thing differs
only by its rounding; bf16 drifts to about 1e-2 within the ten steps).
"""

import json
import os
import sys

from configurator import fail

HF = 'hf_llama'
TARGETS = (('standard ≥ 40% MFU', 'mfu', 0.40, '>='),         # (label, row key, goal, sense)
           ("standard ≥ 1.3× Hugging Face's tokens/s", 'over_hf', 1.3, '>='),
           ("standard ≤ 0.6× Hugging Face's peak memory", 'memory_over_hf', 0.6, '<='))


def load(folder):
    """{setting: bench.py's JSON} for every <setting>.json in folder that bench.py wrote (not --profile's traces),
    the eager and default settings first, the best last."""
    names = sorted(f[:-5] for f in os.listdir(folder) if f.endswith('.json') and not f.startswith('profile_'))
    first, last = ('eager', 'default'), ('best',)
    order = [n for n in first if n in names] + [n for n in names if n not in first + last] + \
        [n for n in last if n in names]
    out = {}
    for name in order:
        with open(os.path.join(folder, f'{name}.json')) as f:
            run = json.load(f)
        if isinstance(run, dict) and 'setup' in run and 'results' in run:
            out[name] = run
    return out


def rows(runs):
    """One dict per (setting, model): its tokens/s, ms, MFU, memory, its ratios to the default setting's model of
    the same variant and to Hugging Face's model, and its losses' largest relative difference from the eager
    step's (None where a run is missing)."""
    by = lambda name, variant: next((r for r in runs.get(name, {}).get('results', []) if r['variant'] == variant),
                                    None)
    hf = by('default', HF)
    out = []
    for name, run in runs.items():
        setup = run['setup']
        for r in run['results']:
            if r['variant'] == HF and name != 'default':
                continue
            base, eager = by('default', r['variant']), by('eager', 'standard' if r['variant'] == HF else r['variant'])
            loss = None
            if eager and r.get('losses') and eager.get('losses') and r['variant'] != HF:
                loss = max(abs(a - b) / abs(b) for a, b in zip(r['losses'], eager['losses']))
            ratio = lambda key, other: r[key] / other[key] if other and r.get(key) and other.get(key) else None
            out.append(dict(setting=name, variant=r['variant'], compile_mode=r.get('compile_mode',
                            setup.get('compile_mode')), optimizer=r.get('optimizer', setup.get('optimizer_impl')),
                            tokens_per_s=r['tokens_per_s'], ms=r['ms_per_iter'], mfu=r['mfu'],
                            memory=r['peak_memory'], over_default=ratio('tokens_per_s', base),
                            over_hf=None if r['variant'] == HF else ratio('tokens_per_s', hf),
                            memory_over_hf=None if r['variant'] == HF else ratio('peak_memory', hf),
                            loss_vs_eager=loss, device=setup.get('device_name')))
    return out


def best(runs):
    """(compile mode, AdamW implementation) of the fastest standard step: the compiled setting whose tokens/s is
    highest, and foreach only where its run beat the fused default; ('', 'fused') when nothing beat the default."""
    rs = [r for r in rows(runs) if r['variant'] == 'standard' and r['compile_mode'] and r['setting'] != 'best']
    if not rs:
        return '', 'fused'
    fused = [r for r in rs if r['optimizer'] == 'fused']
    mode = max(fused or rs, key=lambda r: r['tokens_per_s'])['compile_mode']
    default = next((r for r in rs if r['setting'] == 'default'), None)
    foreach = [r for r in rs if r['optimizer'] == 'foreach' and r['compile_mode'] == 'default']
    impl = 'foreach' if foreach and default and foreach[0]['tokens_per_s'] > default['tokens_per_s'] else 'fused'
    return ('' if mode == 'default' else mode), impl


def table(runs):
    """The markdown tables: every setting's models, then the best setting's standard step against the targets."""
    fmt = lambda x, f: '—' if x is None else f.format(x)
    lines = ['| setting | model | compile mode | AdamW | tokens/s | ms/iter | MFU | peak memory | over default '
             '| over HF | memory / HF | loss vs eager |', '|' + '---|' * 12]
    rs = rows(runs)
    for r in rs:
        lines.append(f"| {r['setting']} | {r['variant']} | {r['compile_mode'] or 'eager'} | {r['optimizer']} | "
                     f"{r['tokens_per_s']:,.0f} | {r['ms']:.1f} | {fmt(r['mfu'], '{:.1%}')} | "
                     f"{fmt(r['memory'] and r['memory'] / 2**30, '{:.2f} GiB')} | "
                     f"{fmt(r['over_default'], '{:.3f}×')} | "
                     f"{fmt(r['over_hf'], '{:.3f}×')} | {fmt(r['memory_over_hf'], '{:.2f}×')} | "
                     f"{fmt(r['loss_vs_eager'], '{:.1e}')} |")
    devices = sorted({r['device'] for r in rs if r['device']})
    std = [r for r in rs if r['variant'] == 'standard' and r['compile_mode']]
    if std:
        top = max(std, key=lambda r: r['tokens_per_s'])
        lines += ['', f"| target | measured ({top['setting']}: {top['compile_mode']}, AdamW {top['optimizer']}) | |",
                  '|---|---|---|']
        for label, key, goal, sense in TARGETS:
            v = top[key]
            met = None if v is None else (v >= goal if sense == '>=' else v <= goal)
            shown = fmt(v, '{:.1%}' if key == 'mfu' else '{:.2f}×')
            lines.append(f"| {label} | {shown} | {'—' if met is None else 'met' if met else 'missed'} |")
    return f"On {', '.join(devices) or '?'}:\n\n" + '\n'.join(lines)


def main(argv):
    if '-h' in argv or '--help' in argv:
        print(__doc__.strip())
        return
    folders = [a for a in argv if not a.startswith('--')]
    if len(folders) != 1 or any(a.startswith('--') and a != '--best' for a in argv) or \
            not os.path.isdir(folders[0]):
        fail(f"speed.py takes one folder of bench.py JSONs and --best, got {' '.join(argv) or 'nothing'}")
    runs = load(folders[0])
    if not runs:
        fail(f"no bench.py JSON in {folders[0]}")
    if '--best' in argv:
        mode, impl = best(runs)
        print(f"--compile_mode={mode} --optimizer_impl={impl}")
    else:
        print(table(runs))


if __name__ == '__main__':
    main(sys.argv[1:])
