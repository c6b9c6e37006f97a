#!/bin/sh
# Paper 3, Fig. 3b/3c sampled points: the one-shot run's model (results/paper3/oneshot/command.sh saves it), theory
# again, and NUTS samples of the theory network at N = 10 (needs pyro-ppl).
OMP_NUM_THREADS=1 python bayes_paths.py oneshot config/oneshot_cpu.py --load=out/paths-oneshot/gd_model.pt \
    --save_model= --nuts_samples=400 --nuts_warmup=200 --out_dir=results/paper3/oneshot-nuts
