python bench.py --against=hf --rounds=2 --block_size=512 --cpu_keep_memory=True --json_out=out/bench/kept_hf_T512_compiled.json
