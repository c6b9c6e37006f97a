#!/bin/sh
# Paper 3, Fig. 2c/d and Fig. 5b: all four paths, sigma_perp = 1, seed 0 (docs/paper3.md#hidden-markov-chain-task); about 25 s on one core.
OMP_NUM_THREADS=1 python bayes_paths.py hmc --out_dir=out/paths-hmc
