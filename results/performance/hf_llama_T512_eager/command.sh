python bench.py --against=hf --block_size=512 --compile=False --rounds=2 --iters=10 --json_out=out/bench/hf_eager_T512.json
