python bench.py --shape=lm --compile=False --dtype=float32 --cpu_keep_memory=True --json_out=out/bench/fp32_eager_kept.json
