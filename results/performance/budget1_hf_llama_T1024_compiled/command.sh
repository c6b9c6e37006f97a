python bench.py --against=hf --rounds=2 --activation_memory_budget=1.0 --json_out=out/bench/budget1_hf_T1024_compiled.json
