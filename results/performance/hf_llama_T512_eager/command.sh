python bench.py --against=hf --block_size=512 --compile=False --rounds=2 --json_out=out/bench/hf_T512_eager.json
