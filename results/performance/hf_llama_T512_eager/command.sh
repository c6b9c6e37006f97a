python bench.py --against=hf --block_size=512 --compile=False --rounds=2 --cpu_keep_memory=False --json_out=out/bench/hf_T512_eager.json
