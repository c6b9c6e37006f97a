"""Wall time of bench.py's CPU peak measurement at cpu_peak_n = 4096 (hardware.cpu_matmul_size, then
hardware.cpu_matmul_flops) for bf16 and fp32, and of train.py's dtype='auto' choice (hardware.auto_cpu_dtype).

    python -m experiments.performance.peak_time > results/performance/auto_T1024_epyc_avx2/peak_time.txt
"""
import time

import torch

from hardware import auto_cpu_dtype, cpu_matmul_flops, cpu_matmul_size, cpu_model

print(f'{cpu_model()}, {torch.get_num_threads()} threads, torch {torch.__version__}')
t0 = time.perf_counter()
name, bf16, fp32 = auto_cpu_dtype()
seconds = time.perf_counter() - t0
print(f'auto_cpu_dtype: {name} (bf16 {bf16 / 1e9:.2f}, fp32 {fp32 / 1e9:.1f} GFLOP/s), {seconds:.2f} s')
for dtype in (torch.bfloat16, torch.float32):
    t0 = time.perf_counter()
    n = cpu_matmul_size(dtype, 4096)
    flops = cpu_matmul_flops(dtype, n)
    print(f'{dtype}: {n}^3, {flops / 1e12:.4f} TFLOP/s, {time.perf_counter() - t0:.1f} s')
