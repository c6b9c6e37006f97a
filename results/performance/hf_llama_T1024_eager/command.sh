python bench.py --against=hf --compile=False --rounds=2 --json_out=out/bench/hf_T1024_eager.json
