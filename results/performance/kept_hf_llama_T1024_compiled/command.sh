python bench.py --against=hf --rounds=2 --cpu_keep_memory=True --json_out=out/bench/kept_hf_T1024_compiled.json
