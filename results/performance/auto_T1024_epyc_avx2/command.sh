python bench.py --compile=False --json_out=out/bench/auto_avx2.json
