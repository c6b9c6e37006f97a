python bench.py --shape=lm --against=hf --rounds=2 --block_size=512 --profile=out/bench/prof/T512_compiled --json_out=results/performance/hf_llama_T512_compiled/results.json
gzip -c out/bench/prof/T512_compiled_standard.json > results/performance/hf_llama_T512_compiled/trace_standard.json.gz
gzip -c out/bench/prof/T512_compiled_hf_llama.json > results/performance/hf_llama_T512_compiled/trace_hf_llama.json.gz
python -m experiments.performance.profile_table results/performance/hf_llama_T512_compiled/trace_standard.json.gz > results/performance/hf_llama_T512_compiled/profile_table_standard.md
python -m experiments.performance.profile_table results/performance/hf_llama_T512_compiled/trace_hf_llama.json.gz > results/performance/hf_llama_T512_compiled/profile_table_hf_llama.md
