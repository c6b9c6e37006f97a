"""
One chunk of the output layer's elementwise work (ChunkedHeadLoss: 333 rows of a 50,304 vocabulary, bf16
logits, the log-softmax and its gradient in fp32), done two ways on a CPU:

  buffers:  widen the bf16 logits into an fp32 buffer, log_softmax(out=) into another, scale the gradient in
            place and copy it back into the bf16 buffer (what head_loss.py does);
  implicit: log_softmax(z, dtype=float32, out=) straight from the bf16 logits, and the scaled gradient written
            to the bf16 buffer by torch.mul(..., out=), of another dtype than its inputs.

The second has fewer ops but each of those two calls makes a full-size fp32 temporary (ATen converts first,
or computes into a temporary and copies into out), which a 64 MB allocation maps afresh every chunk. Prints the
median ms per chunk over 13 chunks (a T = 512 step's), 5 repeats, each way twice.

    python -m experiments.performance.head_chunk
"""

import statistics
import time

import torch

k, V, chunks = 333, 50304, 13
torch.manual_seed(0)
logits = [torch.randn(k, V).bfloat16() for _ in range(2)]           # stand for the chunks' matmul outputs
targets, scored, denom = torch.randint(0, V, (k,)), torch.ones(k, dtype=torch.bool), torch.tensor(4096.)
z_buf, f_buf, g_buf = torch.empty(k, V, dtype=torch.bfloat16), torch.empty(k, V), torch.empty(k, V)


def buffers():
    for i in range(chunks):
        z = f_buf.copy_(z_buf.copy_(logits[i % 2]))
        g = torch.log_softmax(z, dim=-1, out=g_buf)
        (g.gather(1, targets[:, None]).squeeze(1) * scored).sum()
        g.exp_().scatter_add_(1, targets[:, None], -torch.ones_like(g[:, :1]))
        g *= (scored / denom)[:, None]
        z_buf.copy_(g)


def implicit():
    for i in range(chunks):
        z = z_buf.copy_(logits[i % 2])
        g = torch.log_softmax(z, dim=-1, dtype=torch.float32, out=g_buf)
        (g.gather(1, targets[:, None]).squeeze(1) * scored).sum()
        g.exp_().scatter_add_(1, targets[:, None], -torch.ones_like(g[:, :1]))
        torch.mul(g, (scored / denom)[:, None], out=z_buf)


print(f"{chunks} chunks of {k} x {V}, {torch.get_num_threads()} threads")
for _ in range(2):
    for way in (buffers, implicit):
        way()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            way()
            times.append(time.perf_counter() - t0)
        print(f"{way.__name__:<9} {1000 * statistics.median(times) / chunks:6.1f} ms per chunk", flush=True)
