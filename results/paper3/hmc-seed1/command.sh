#!/bin/sh
# Paper 3, Fig. 2c with seed 1 (data and random heads) (docs/paper3.md#hidden-markov-chain-task); about 25 s on one core.
OMP_NUM_THREADS=1 python bayes_paths.py hmc --seed=1 --out_dir=out/paths-hmc-seed1
