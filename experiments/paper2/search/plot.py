"""Test accuracy against the step for every attempt in results/paper2/search/, one panel per task (the folder name's
first word: khop2, dyck1) and architecture (from the name: `_attn_` attention-only, `_res_ln_` + residual and LN,
`_res_`, `_mlp_`, `_mlp_ln_` the other architectures of Table 2 together; the k-hop attempts, which name only
their model, are + residual and LN), one line per attempt.

    python -m experiments.paper2.search.plot    # writes assets/universal_search_cpu.png
"""
import os

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

from experiments.paper2.runs import read_log

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RESULTS = os.path.join(ROOT, 'results', 'paper2', 'search')      # the runs' folders
runs = sorted(d for d in os.listdir(RESULTS) if os.path.isfile(os.path.join(RESULTS, d, 'log.jsonl')))
ARCHS = ['attention-only', '+ residual and LN', '+ residual, + MLP, + MLP and LN']


def panel(run):
    """(task, index into ARCHS) of a run's folder name."""
    task = run.split('_')[0]
    if '_attn_' in run:
        return task, 0
    if '_res_ln_' in run or not any(f'_{a}_' in run for a in ('res', 'mlp')):
        return task, 1
    return task, 2


panels = sorted({panel(r) for r in runs}, key=lambda p: (p[0] == 'dyck1', p))     # the k-hop tasks first
cols = 2
rows = (len(panels) + cols - 1) // cols
fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.2 * rows), squeeze=False)
for ax in axes.flat[len(panels):]:
    ax.axis('off')
for ax, (task, arch) in zip(axes.flat, panels):
    panel_runs = [r for r in runs if panel(r) == (task, arch)]
    if len(panel_runs) > 10:                                            # more lines than tab10 has colours
        ax.set_prop_cycle(color=plt.cm.tab20.colors)
    for run in panel_runs:
        records = [r for r in read_log(os.path.join(RESULTS, run, 'log.jsonl')) if 'val_acc' in r and 'cpu_s' not in r]
        ax.plot([r['iter'] for r in records], [100 * r['val_acc'] for r in records], label=run.partition('_')[2],
                lw=1.2)
    ax.set(title=f"{task}, {ARCHS[arch]}: search runs", xlabel='step', ylabel='test accuracy (%)')
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
fig.tight_layout()
png = os.path.join(ROOT, 'assets', 'universal_search_cpu.png')
fig.savefig(png, dpi=110)
print(f"wrote {os.path.normpath(png)}")
