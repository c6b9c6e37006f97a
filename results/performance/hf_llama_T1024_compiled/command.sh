python bench.py --shape=lm --against=hf --rounds=2 --json_out=results/performance/hf_llama_T1024_compiled/results.json
