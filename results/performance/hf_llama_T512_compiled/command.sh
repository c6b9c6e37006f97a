python bench.py --against=hf --block_size=512 --rounds=2 --json_out=out/bench/hf_T512_compiled.json
