python bench.py --cpu_keep_memory=True --json_out=out/bench/kept_compiled.json
