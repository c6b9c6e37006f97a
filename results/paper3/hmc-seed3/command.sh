#!/bin/sh
# Paper 3, Fig. 2c with seed 3 (data and random heads) (docs/paper3.md#hidden-markov-chain-task); about 25 s on one core.
OMP_NUM_THREADS=1 python bayes_paths.py hmc --seed=3 --out_dir=out/paths-hmc-seed3
