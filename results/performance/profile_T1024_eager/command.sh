python bench.py --compile=False --cpu_keep_memory=True --profile=out/bench/prof3/eager --json_out=out/bench/eager_profile.json
