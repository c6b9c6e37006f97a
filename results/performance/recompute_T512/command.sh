python results/performance/recompute.py 512
