"""Wall-clock seconds from `python <script> --help` to its exit, for each script of one or more checkouts, beside
`python -c "import torch"` (the floor every script stands on). The commands run in turn, `repeats` rounds, so
that a machine whose load drifts slows each alike; prints each command's median, min and max.

    python -m experiments.performance.start_time                      # this checkout
    python -m experiments.performance.start_time . /path/to/other/checkout --repeats=9
"""

import statistics
import subprocess
import sys
import time

SCRIPTS = ('train.py', 'bench.py', 'sample.py', 'universal.py verify', 'bayes_paths.py oneshot', 'sde.py check')


def seconds(argv, cwd):
    """Wall-clock seconds of one run of argv in cwd; raises RuntimeError when it exits non-zero."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(argv)} in {cwd}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return time.perf_counter() - t0


def main(argv):
    repeats = int(next((a.split('=', 1)[1] for a in argv if a.startswith('--repeats=')), 7))
    roots = [a for a in argv if not a.startswith('--')] or ['.']
    commands = [('import torch', roots[0], [sys.executable, '-c', 'import torch'])] + \
        [(f'{root}: {s} --help', root, [sys.executable, *s.split(), '--help']) for s in SCRIPTS for root in roots]
    times = {name: [] for name, _, _ in commands}
    for _ in range(repeats):
        for name, root, command in commands:
            times[name].append(seconds(command, root))
    for name, t in times.items():
        print(f"{name:<45} median {statistics.median(t):.2f} s  (min {min(t):.2f}, max {max(t):.2f}, {len(t)} runs)")


if __name__ == '__main__':
    main(sys.argv[1:])
