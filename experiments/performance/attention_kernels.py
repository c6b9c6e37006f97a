"""
Forward + backward time of one layer's causal attention at paper 1's LM shape (8 sequences, 8 heads of 64, T
positions, bf16) on a CPU, three ways: PyTorch's flash kernel (what model.py runs), the same attention written
as matmuls and a softmax over the whole T x T scores, and those two batched matmuls alone (q k^T, then times
v, over the whole square: the matmul work without the softmax). Prints each one's median time
and its rate in the counted FLOPs (bench.py's convention: causal, (T+1)/2 positions per token), beside
the rate of one square matmul.

    python -m experiments.performance.attention_kernels        # T = 1024
    python -m experiments.performance.attention_kernels 512
"""

import statistics
import sys
import time

import torch
import torch.nn.functional as F

B, H, D = 8, 8, 64
T = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
dtype = torch.bfloat16


def flash(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def softmax_matmuls(q, k, v):
    scores = (q @ k.transpose(-2, -1)) * D ** -0.5
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    return torch.softmax(scores.float().masked_fill(~causal, float('-inf')), dim=-1).to(dtype) @ v


def matmuls_only(q, k, v):
    return (q @ k.transpose(-2, -1)) @ v


torch.manual_seed(0)
q, k, v = (torch.randn(B, H, T, D, dtype=dtype, requires_grad=True) for _ in range(3))
grad = torch.randn(B, H, T, D, dtype=dtype)
counted = 6 * B * T * (T + 1) / 2 * H * 2 * D      # forward S and PV, backward dP, dV, dQ, dK (bench.py)
a = torch.randn(4096, 4096, dtype=dtype)
peak = []
for _ in range(3):
    t0 = time.perf_counter()
    a @ a
    peak.append(2 * 4096 ** 3 / (time.perf_counter() - t0))
print(f"B {B}, {H} heads of {D}, T {T}, {dtype}, {torch.get_num_threads()} threads; a 4096^3 matmul: "
      f"{max(peak) / 1e12:.3f} TFLOP/s")
for name, attention in (('flash kernel', flash), ('softmax + matmuls', softmax_matmuls),
                        ('matmuls only', matmuls_only)):
    times = []
    for i in range(6):                               # the first is a warm-up
        t0 = time.perf_counter()
        attention(q, k, v).backward(grad)
        times.append(time.perf_counter() - t0)
    t = statistics.median(times[1:])
    print(f"{name:<18} {1000 * t:7.1f} ms  {counted / t / 1e12:.3f} TFLOP/s counted")
