python bench.py --shape=lm --against=hf --rounds=2 --compile=False --json_out=out/bench/hf_T1024_eager.json
