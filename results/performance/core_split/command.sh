# the same tiny runs on the repository before the core/ops split (7cacfa0) and after it (ce7ca4b), each checkout in
# its own folder; CPU: AMD EPYC (2 cores, AVX2, no AVX-512), one thread per run
bash experiments/performance/pin_losses.sh /path/to/checkout-7cacfa0 results/performance/core_split/before
bash experiments/performance/pin_losses.sh /path/to/checkout-ce7ca4b results/performance/core_split/after
python -m experiments.performance.pin_compare results/performance/core_split/before results/performance/core_split/after
# bench.py beside Hugging Face's Llama (transformers 5.25.0), the standard model at 12 x 512, T = 256, batch 8,
# compiled, float32 (auto), the two models' timed steps interleaved in 2 rounds; in the checkout before the split,
# then in the one after it, one after the other on the same machine (2 threads each)
python bench.py --shape=lm --against=hf --rounds=2 --block_size=256 --warmup=2 --json_out=results/performance/core_split/bench_before.json   # 7cacfa0
python bench.py --shape=lm --against=hf --rounds=2 --block_size=256 --warmup=2 --json_out=results/performance/core_split/bench_after.json    # ce7ca4b
