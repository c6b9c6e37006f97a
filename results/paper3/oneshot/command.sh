#!/bin/sh
# Paper 3, one-shot Omniglot at CPU scale (docs/paper3.md#one-shot-image-classification); data/ as in docs/paper3.md.
# Writes results/paper3/oneshot/ and out/paths-oneshot/gd_model.pt (the model the NUTS run loads).
OMP_NUM_THREADS=2 python bayes_paths.py oneshot config/oneshot_cpu.py
