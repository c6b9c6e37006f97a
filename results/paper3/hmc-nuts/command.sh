#!/bin/sh
# Paper 3, App. F: NUTS samples of the HMC network's weights at N = 10 against the theory (docs/paper3.md#nuts-check);
# one chain, 200 warm-up steps and 400 samples, 11 minutes on one core. Needs pyro-ppl (here 1.9.1 with torch 2.13.0).
OMP_NUM_THREADS=1 python bayes_paths.py nuts --out_dir=out/paths-hmc-nuts
