#!/bin/sh
# Paper 2, Theorems 3.1-3.4: every construction (the sparse one in both readings) against a random target, H, L in
# {1, 2, 3}, causal or not; the routed sparse one where d_in > 2Hd (leaves rising through wider blocks) and at the
# CPU k-hop shape; the random construction at the paper's Dyck-1 and 2-hop sizes; then the widths of the paper's
# settings (docs/paper2.md#exactness). About 3 minutes on one core; log.txt is its output.
export OMP_NUM_THREADS=1
for c in sparse sparse_identity looped random random_looped; do for causal in False True; do for H in 1 2 3; do for L in 1 2 3; do
    python universal.py verify --H=$H --L=$L --d=4 --d_in=5 --n=16 --construction=$c --causal=$causal
done; done; done; done
for H in 1 2; do python universal.py verify --H=$H --L=3 --d=1 --d_in=5 --n=16 --causal=True; done
python universal.py verify --H=2 --L=3 --d=4 --d_in=30 --n=33 --causal=True
python universal.py verify --H=4 --L=2 --d=24 --d_in=4 --n=60 --causal=True --construction=random
python universal.py verify --H=2 --L=3 --d=28 --d_in=30 --n=99 --causal=True --construction=random
python universal.py dims
