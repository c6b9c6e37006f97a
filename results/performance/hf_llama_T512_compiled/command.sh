python bench.py --against=hf --block_size=512 --rounds=2 --iters=10 --json_out=out/bench/hf_compiled_T512.json
