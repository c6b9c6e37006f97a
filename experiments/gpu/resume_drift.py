"""The stop-and-resume checks of results/gpu/h100/{standard,mixit} against the drift between two GPU runs:
the relative difference of the uninterrupted run's loss (train.txt) and the stopped-then-resumed run's
(train_stopped.txt, train_resumed.txt), per iteration, before and after the stop, from the printed losses.

    python -m experiments.gpu.resume_drift
"""
import os
import re

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       'results', 'gpu', 'h100')      # the H100 stages' logs


def losses(*files):
    out = {}
    for f in files:
        out.update({int(i): float(v) for i, v in re.findall(r'^iter (\d+): loss ([\d.]+)', open(f).read(), re.M)})
    return out


for stage in ('standard', 'mixit'):
    d = os.path.join(RESULTS, stage)
    a = losses(f'{d}/train.txt')
    b = losses(f'{d}/train_stopped.txt', f'{d}/train_resumed.txt')
    n, stop = max(a), max(a) // 2
    rel = {i: abs(a[i] - b[i]) / a[i] for i in a}
    first = min(i for i in rel if rel[i] > 0)
    before, after = max(rel[i] for i in range(stop - 4, stop + 1)), rel[stop + 1]
    print(f"{stage}: {n} iterations, stopped after {stop}. The two runs first differ at iteration {first}; "
          f"relative loss difference up to {before:.1e} over iterations {stop - 4}-{stop}, {after:.1e} at "
          f"{stop + 1} (the first resumed), largest {max(rel.values()):.1e} over the whole run")
