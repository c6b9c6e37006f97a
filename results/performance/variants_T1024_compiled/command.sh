python bench.py --shape=lm --variants=standard,frozen_qk,frozen_mlp,mixit --rounds=2 --json_out=results/performance/variants_T1024_compiled/results.json
