python bench.py --shape=lm --compile=False --cpu_keep_memory=True --profile=out/bench/prof/eager --json_out=out/bench/profile_T1024_eager.json
