#!/bin/sh
# Paper 3, Fig. 2e: the good and denoising paths alone, sigma_perp = 5 (docs/paper3.md#hidden-markov-chain-task); about 25 s on one core.
OMP_NUM_THREADS=1 python bayes_paths.py hmc --two_paths=True --sigma_perp=5.0 --out_dir=out/paths-hmc-two-paths
