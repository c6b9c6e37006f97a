python bench.py --shape=lm --against=hf --rounds=2 --cpu_keep_memory=True --json_out=results/performance/kept_hf_llama_T1024_compiled/results.json
