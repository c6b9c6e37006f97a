python results/performance/recompute.py 1024
