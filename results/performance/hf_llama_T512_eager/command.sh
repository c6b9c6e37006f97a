python bench.py --shape=lm --against=hf --rounds=2 --block_size=512 --compile=False --json_out=out/bench/hf_T512_eager.json
