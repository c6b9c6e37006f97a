python bench.py --variants=standard,frozen_qk,frozen_mlp,mixit --rounds=2 --cpu_keep_memory=False --json_out=out/bench/variants.json
