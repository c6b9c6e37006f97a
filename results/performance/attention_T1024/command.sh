python -m experiments.performance.attention_kernels
