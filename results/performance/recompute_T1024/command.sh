python -m experiments.performance.recompute 1024
