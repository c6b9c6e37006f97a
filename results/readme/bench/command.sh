# bench.py's default on a CPU (the small shape), from a fresh start: the CPU-peak cache and inductor's cache
# emptied first, timed by /usr/bin/time (wall_clock.txt). CPU: AMD EPYC, 2 cores, avx512_bf16 (lscpu); torch 2.13.0.
rm -rf ~/.cache/learned-transformer /tmp/torchinductor_$USER
/usr/bin/time -f "wall-clock %e s" python bench.py --json_out=results/readme/bench/bench.json \
    > results/readme/bench/stdout.txt
rm -rf /tmp/torchinductor_$USER
/usr/bin/time -f "wall-clock %e s" python bench.py --dtype=float32 --json_out=results/readme/bench/bench_fp32.json \
    > results/readme/bench/stdout_fp32.txt
