# One NVIDIA H100 80GB HBM3, torch 2.11.0+cu130 (each stage's machine.txt), from the repository root with
# data/gpu_lm (bash experiments/gpu/run.sh data) beside the code.
# tests/, standard/, ddp/, bench/ and all/ (each stage's console): the four correctness stages side by side, then
# bench.py alone. Its mixit stage ran out of GPU memory beside the other three (all/mixit.txt).
bash experiments/gpu/run.sh all
# mixit/: the mixit stage alone on the GPU (beside paper.sh's sentiment stage, results/paper1/paper/imdb_*_1)
ITERS=120 BATCH=32 bash experiments/gpu/run.sh mixit
