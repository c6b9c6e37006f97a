#!/bin/sh
# Paper 3, one-shot Omniglot at CPU scale (docs/paper3.md#one-shot-image-classification); data/ as in docs/paper3.md.
OMP_NUM_THREADS=1 python bayes_paths.py oneshot config/oneshot_cpu.py
