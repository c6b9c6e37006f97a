"""
What a compiled training step's backward recomputes under three settings of the partitioner
(hardware.partitioner_settings), at paper 1's LM shape (8 sequences of T, bf16 autocast, fused AdamW, gradient
clipping): torch's defaults, a memory budget of 0.5 with pointwise recomputation, and pointwise recomputation
alone (train.py's default). For each: the matmuls (aten::mm) and flash-attention forwards of one step, from
a profiled step (the eager step makes 21 matmuls and one attention forward per layer, plus 3 per head chunk),
the resident memory one step adds to what was live when it began (its gradients, activations and
temporaries; the weights and optimizer state were live before) and the median of 3 step times. Each
setting compiles afresh in the order given; the times are one process's, taken minutes apart: bench.py's
interleaved runs are the speed comparison, these the counts and memory.

    python -m experiments.performance.recompute 512
    python -m experiments.performance.recompute 1024
"""

import gc
import statistics
import sys
import time

import torch
import torch._functorch.config

from hardware import partitioner_settings
from memory import ResidentPeak, release_free_memory
from model import GPT, GPTConfig

SETTINGS = {
    "torch's defaults": partitioner_settings(),
    'budget 0.5, pointwise': partitioner_settings(0.5, recompute_pointwise=True),
    'pointwise (train.py)': partitioner_settings(recompute_pointwise=True),
}
T = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
B, FLASH = 8, 'aten::_scaled_dot_product_flash_attention_for_cpu'

print(f"B {B}, T {T}, bf16 autocast, {torch.get_num_threads()} threads")
print("| setting | matmuls | attention forwards | memory the step adds | step |\n|---|---|---|---|---|")
for name, settings in SETTINGS.items():
    torch._dynamo.reset()
    gc.collect()
    torch.manual_seed(0)
    raw = GPT(GPTConfig(block_size=T))
    optimizer = raw.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cpu')
    model = torch.compile(raw)
    x, y = torch.randint(50304, (2, B, T)).unbind(0)

    def step():
        with torch.autocast('cpu', dtype=torch.bfloat16), torch._functorch.config.patch(**settings):
            loss = model(x, y)[1]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(raw.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step(), step()                                   # compiles
    with torch.profiler.profile() as prof:
        step()
    calls = {e.key: e.count for e in prof.key_averages()}
    gc.collect()
    release_free_memory()
    with ResidentPeak() as rss:
        step()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    print(f"| {name} | {calls.get('aten::mm', 0)} | {calls.get(FLASH, 0)} | "
          f"{(rss.peak - rss.start) / 2**30:.2f} GiB | {statistics.median(times):.2f} s |", flush=True)
    del model, raw, optimizer
