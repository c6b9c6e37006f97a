python bench.py --compile=False --dtype=float32 --cpu_keep_memory=False --json_out=out/bench/fp32_eager.json
