#!/bin/sh
# Paper 1, Theorem 2.1: MixiT's covariance SDE against finite networks, checks (a)-(c) (docs/paper1.md#mixits-covariance-sde);
# about 1.5 CPU-minutes on one core.
OMP_NUM_THREADS=1 python sde.py check --out_dir=out/sde
