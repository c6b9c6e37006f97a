python bench.py --variants=standard,frozen_qk,frozen_mlp,mixit --rounds=2 --json_out=out/bench/variants_T1024_compiled.json
