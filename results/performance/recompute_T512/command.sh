python -m experiments.performance.recompute 512
