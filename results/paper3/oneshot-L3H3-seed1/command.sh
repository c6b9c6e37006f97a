#!/bin/sh
# Paper 3, Fig. 6 at a small size (results/paper3/oneshot-L3H3) with seed 1 (model init and episodes).
OMP_NUM_THREADS=1 python bayes_paths.py oneshot --layers=3 --heads=3 --n_embd=128 --qk_dim=64 --gd_steps=5000 \
    --gd_lr=1e-3 --eval_every=500 --n_eval=8000 --P=600 --widths=10,100,1000 --seed=1 \
    --out_dir=out/paths-oneshot-L3H3-seed1 --tag=_L3H3_seed1
