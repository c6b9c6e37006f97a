# The host's time to draw one global batch of each full-size config's task (bench.py's `data` figure; the timed
# model is shrunk to one small layer, which the figure does not depend on), from the repository root:
#   bash results/performance/data_draws/command.sh > results/performance/data_draws/stdout.txt
set -e
small="--device=cpu --compile=False --dtype=float32 --n_layer=1 --n_embd=64 --n_head=4 --head_dim=16 --iters=10 --warmup=1
       --cpu_peak_n=256 --data_iters=10"
for run in "config/universal_dyck1.py --dyck1_batched=False" "config/universal_dyck1.py" \
           "config/dyck1_standard.py --dyck1_batched=False" "config/dyck1_standard.py" \
           config/universal_khop3.py config/khop_standard.py config/memorization_standard.py \
           config/decimal_addition_standard.py config/table5_random.py; do
    echo "python bench.py $run"
    OMP_NUM_THREADS=1 python bench.py $run $small | grep -o "batch [0-9]* = .*tokens/iter\|data .* host"
done
lscpu | grep 'Model name'
