python bench.py --shape=lm --compile=False --dtype=float32 --json_out=out/bench/fp32_eager.json
