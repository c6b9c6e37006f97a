python bench.py --shape=lm --against=hf --rounds=2 --block_size=512 --cpu_keep_memory=True --json_out=results/performance/kept_hf_llama_T512_compiled/results.json
