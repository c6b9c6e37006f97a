# the same tiny runs on the repository before GPTConfig's grouping, the one sequence-length key and the task-scored
# capacity (0880a18) and after them (a3c3e32), each checkout in its own folder; CPU:
# machine.txt, one thread per run
bash experiments/performance/pin_losses.sh /path/to/checkout-0880a18 results/performance/config_groups/before
bash experiments/performance/pin_losses.sh /path/to/checkout-a3c3e32 results/performance/config_groups/after
python -m experiments.performance.pin_compare results/performance/config_groups/before results/performance/config_groups/after
# bench.py beside Hugging Face's Llama, the standard model at 12 x 512, T = 256, batch 8, compiled, bfloat16 (auto on
# this CPU), the two models' timed steps interleaved in 2 rounds; in the checkout before, then in the one after, one
# after the other on the same machine (2 threads each)
python bench.py --shape=lm --against=hf --rounds=2 --block_size=256 --warmup=2 --json_out=results/performance/config_groups/bench_before.json   # 0880a18
python bench.py --shape=lm --against=hf --rounds=2 --block_size=256 --warmup=2 --json_out=results/performance/config_groups/bench_after.json    # a3c3e32
