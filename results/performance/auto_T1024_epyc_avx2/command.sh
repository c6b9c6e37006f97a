python bench.py --shape=lm --compile=False --json_out=out/bench/auto_avx2.json
