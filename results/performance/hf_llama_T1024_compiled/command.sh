python bench.py --against=hf --rounds=2 --json_out=out/bench/hf_T1024_compiled.json
