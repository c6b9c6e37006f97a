# the same tiny runs on the repository before the core/ops split (7cacfa0) and after it (ce7ca4b), each checkout in
# its own folder; CPU: AMD EPYC (2 cores, AVX2, no AVX-512), one thread per run
bash experiments/performance/pin_losses.sh /path/to/checkout-7cacfa0 results/performance/core_split/before
bash experiments/performance/pin_losses.sh /path/to/checkout-ce7ca4b results/performance/core_split/after
python -m experiments.performance.pin_compare results/performance/core_split/before results/performance/core_split/after
