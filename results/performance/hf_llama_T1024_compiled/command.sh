python bench.py --against=hf --rounds=2 --iters=10 --json_out=out/bench/hf_compiled_T1024.json
