python results/performance/attention_kernels.py
