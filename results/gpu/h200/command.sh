# One NVIDIA H200, torch 2.11.0+cu130 (bench/machine.txt), from the repository root with data/imdb carried.
# bench/: bench.py alone on the GPU (run.sh's bench stage; console.txt is its console), then paper.sh's
# sentiment (Frozen-QK, Frozen-MLP, seed 1) and addition (standard, MixiT) stages side by side in the time left
# (results/paper1/paper/imdb_frozen_*_1, decimal_addition_{standard,mixit}):
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; s=$(date +%s); mkdir -p out/gpu
timeout -k 10 235 bash experiments/gpu/run.sh bench > out/gpu/bench_console.txt 2>&1
t=$((555 - $(date +%s) + s))   # 359 s
TIME_S=$t SEEDS=1 VARIANTS="frozen_qk frozen_mlp" bash experiments/gpu/paper.sh sentiment > out/gpu/sent.txt 2>&1 &
TIME_S=$t VARIANTS="standard mixit" bash experiments/gpu/paper.sh addition > out/gpu/add.txt 2>&1 &
wait
# Then, on the same machine: the memorization stage beside addition's other three runs
# (results/paper1/paper/memorization_*, decimal_addition_frozen_{qk,mlp}, heads_decimal_addition_mixit_256):
TIME_S=215 bash experiments/gpu/paper.sh memorization > out/gpu/mem.txt 2>&1 &
TIME_S=215 VARIANTS="frozen_qk frozen_mlp mixit_256" bash experiments/gpu/paper.sh addition > out/gpu/add2.txt 2>&1 &
wait
# One NVIDIA H200, torch 2.11.0+cu130, CUDA MPS (each run's machine.txt): paper 2's universal_e and universal_d
# stages and paper 1's khop_qk stage side by side, fifteen runs sharing the GPU through one MPS daemon
# (results/paper2/paper/khop{1,2}_attn_*, dyck1_res_ln_*, khop1_res_ln_*; results/paper1/paper/khop_frozen_qk_*_1):
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONUNBUFFERED=1; mkdir -p out/gpu
source experiments/gpu/common.sh; mps_start out/gpu/paper/mps
for s in universal_e universal_d khop_qk; do TIME_S=420 bash experiments/gpu/paper.sh $s > out/gpu/$s.txt 2>&1 & done
wait
# Then, on the same machine, each stage alone, continuing its stopped runs from their checkpoints (universal_e's
# six runs then finished; universal_d's were stopped again):
TIME_S=290 bash experiments/gpu/paper.sh universal_e > out/gpu/universal_e2.txt 2>&1
TIME_S=140 bash experiments/gpu/paper.sh universal_d > out/gpu/universal_d2.txt 2>&1
