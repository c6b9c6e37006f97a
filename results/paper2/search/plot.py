"""Test accuracy against the step for every attempt in this folder, one panel per task (the folder name's
first word: khop2, dyck1), one line per attempt.

    python results/paper2/search/plot.py        # writes assets/universal_search_cpu.png
"""
import os
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', '..', '..'))
from universal import read_log  # noqa: E402

runs = sorted(d for d in os.listdir(here) if os.path.isfile(os.path.join(here, d, 'log.jsonl')))
tasks = sorted({r.split('_')[0] for r in runs}, reverse=True)
fig, axes = plt.subplots(1, len(tasks), figsize=(6.4 * len(tasks), 4.2), squeeze=False)
for ax, task in zip(axes[0], tasks):
    for run in (r for r in runs if r.split('_')[0] == task):
        records = [r for r in read_log(os.path.join(here, run, 'log.jsonl')) if 'val_acc' in r and 'cpu_s' not in r]
        ax.plot([r['iter'] for r in records], [100 * r['val_acc'] for r in records], label=run.partition('_')[2],
                lw=1.2)
    ax.set(title=f"{task}: search runs", xlabel='step', ylabel='test accuracy (%)')
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
fig.tight_layout()
png = os.path.join(here, '..', '..', '..', 'assets', 'universal_search_cpu.png')
fig.savefig(png, dpi=110)
print(f"wrote {os.path.normpath(png)}")
