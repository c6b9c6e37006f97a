# Start-up of each script's --help on the checkout before head_loss deferred torch's compiler (fc1a0dd, the second
# folder) and after it (5ebde53, the first), the commands interleaved in 7 rounds, beside `import torch` alone.
# CPU: AMD EPYC, 2 cores, avx512_bf16 (lscpu); torch 2.13.0+cpu; other tenants' load varied the times by up to 0.8 s.
python -m experiments.performance.start_time /path/to/checkout-5ebde53 /path/to/checkout-fc1a0dd --repeats=7 \
    > results/performance/help_start/stdout.txt
