#!/bin/sh
# Paper 3, Fig. 3b's network (L = 2, H = 4) at the small size of Figs. 6 and 7 (data/ as in docs/paper3.md).
OMP_NUM_THREADS=1 python bayes_paths.py oneshot --layers=2 --heads=4 --n_embd=128 --qk_dim=64 --gd_steps=5000 \
    --gd_lr=1e-3 --eval_every=500 --n_eval=8000 --P=600 --widths=10,100,1000 --out_dir=out/paths-oneshot-small \
    --tag=_small
