"""Wall-clock seconds from `python <script> --help` to its exit, for each script of one or more checkouts, beside
`python -c "import torch"` (the floor every script stands on). The commands run in turn, `repeats` rounds, so
that a machine whose load drifts slows each alike; prints each command's median, min and max.

    python -m experiments.performance.start_time                      # this checkout
    python -m experiments.performance.start_time . /path/to/other/checkout --repeats=9
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

from configurator import fail

SCRIPTS = ('train.py', 'bench.py', 'sample.py', 'universal.py verify', 'bayes_paths.py oneshot', 'sde.py check')


def seconds(argv, cwd):
    """Wall-clock seconds of one run of argv in cwd; a run that exits non-zero stops this script with one line."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        fail(f"{' '.join(argv[1:])} in {cwd} exited {r.returncode}: {r.stderr.strip().splitlines()[-1:]}")
    return time.perf_counter() - t0


def main(roots, repeats):
    for root in roots:
        if not os.path.isfile(os.path.join(root, 'train.py')):
            fail(f"{root} is not a checkout of this repository (no train.py)")
    commands = [('import torch', roots[0], [sys.executable, '-c', 'import torch'])] + \
        [(f'{root}: {s} --help', root, [sys.executable, *s.split(), '--help']) for s in SCRIPTS for root in roots]
    times = {name: [] for name, _, _ in commands}
    for _ in range(repeats):
        for name, root, command in commands:
            times[name].append(seconds(command, root))
    for name, t in times.items():
        print(f"{name:<45} median {statistics.median(t):.2f} s  (min {min(t):.2f}, max {max(t):.2f}, {len(t)} runs)")


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('roots', nargs='*', default=['.'], help='checkouts to time (default: this one)')
    parser.add_argument('--repeats', type=int, default=7, help='rounds over every command')
    args = parser.parse_args()
    if args.repeats < 1:
        fail(f"--repeats must be >= 1, got {args.repeats}")
    main(args.roots, args.repeats)
