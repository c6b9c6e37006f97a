python bench.py --against=hf --compile=False --rounds=2 --iters=10 --json_out=out/bench/hf_eager_T1024.json
