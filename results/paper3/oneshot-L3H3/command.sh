#!/bin/sh
# Paper 3, Fig. 6 at a small size: L = 3, H = 3 (data/ as in docs/paper3.md).
OMP_NUM_THREADS=1 python bayes_paths.py oneshot --layers=3 --heads=3 --n_embd=128 --qk_dim=64 --gd_steps=5000 \
    --gd_lr=1e-3 --eval_every=500 --n_eval=8000 --P=600 --widths=10,100,1000 --out_dir=out/paths-oneshot-L3H3 \
    --tag=_L3H3
