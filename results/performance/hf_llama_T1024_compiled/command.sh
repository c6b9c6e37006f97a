python bench.py --against=hf --rounds=2 --cpu_keep_memory=False --json_out=out/bench/hf_T1024_compiled.json
