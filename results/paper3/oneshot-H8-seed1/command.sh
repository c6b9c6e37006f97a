#!/bin/sh
# Paper 3, Fig. 7c/d at a small size: L = 2, H = 8, head scores from the theory at N = 10, seed 1 (data_dir holds omniglot/, mnist/, fashion-mnist/ as in docs/paper3.md).
OMP_NUM_THREADS=1 python -m experiments.paper3 oneshot --layers=2 --heads=8 --n_embd=128 --qk_dim=64 --gd_steps=4000 \
    --gd_lr=1e-3 --eval_every=500 --n_eval=2000 --P=600 --widths=10 --taus=0.1,0.25,0.5,0.75,1.0 \
    --out_dir=out/paths-oneshot-H8-seed1 --tag=_H8 --seed=1 --data_dir=../shared/data
