"""
Forward + backward time of one layer's causal attention at paper 1's random transformer shape
(config/table5_random.py: 1,000 sums of 33 positions, 128 heads of width 4, bf16) two ways: as SDPA is given
it (heads of width 4: no fused kernel takes 16-bit heads narrower than 8, and SDPA falls back to its math path)
and as model.sdpa runs it on a GPU (zero-padded to width 8, the flash kernel). Prints each one's median time,
the SDPA backends that accept each shape, and the largest difference between the two outputs.

    python -m experiments.performance.narrow_heads               # on the GPU when there is one
    python -m experiments.performance.narrow_heads --batch=100   # fewer sequences (a CPU: minutes at 1,000)
"""

import statistics
import sys
import time

import torch

from model import sdpa

B = 1000
for arg in sys.argv[1:]:
    value = arg.removeprefix('--batch=')
    if value == arg or not value.isdigit() or int(value) < 1:
        print(f"error: unknown argument {arg} (only --batch=N, N >= 1)", file=sys.stderr)
        sys.exit(2)
    B = int(value)
H, T, D = 128, 33, 4
device = 'cuda' if torch.cuda.is_available() else 'cpu'
dtype = torch.bfloat16


def sync():
    if device == 'cuda':
        torch.cuda.synchronize()


def backends(d):
    """The SDPA backends that accept a (B, H, T, d) causal bf16 problem here (a GPU only)."""
    if device != 'cuda':
        return 'the CPU kernels'
    from torch.backends.cuda import (SDPAParams, can_use_cudnn_attention, can_use_efficient_attention,
                                     can_use_flash_attention)
    t = torch.empty(1, H, T, d, device=device, dtype=dtype)
    params = SDPAParams(t, t, t, None, 0.0, True, False)
    ok = [name for name, can in (('flash', can_use_flash_attention), ('memory-efficient', can_use_efficient_attention),
                                 ('cuDNN', can_use_cudnn_attention)) if can(params)]
    return ', '.join(ok) or 'the math fallback only'


torch.manual_seed(0)
q, k, v = (torch.randn(B, H, T, D, device=device, dtype=dtype, requires_grad=True) for _ in range(3))
grad = torch.randn(B, H, T, D, device=device, dtype=dtype)
print(f"{B} sequences x {H} heads x {T} positions, head width {D}, {dtype}, {device}"
      + (f" ({torch.cuda.get_device_name()})" if device == 'cuda' else ''))
outputs = {}
for name, multiple in (('as given (width 4)', 1), ('padded to width 8', 8)):
    times = []
    for i in range(11):                              # the first is a warm-up
        sync()
        t0 = time.perf_counter()
        y = sdpa(q, k, v, True, D ** -0.5, multiple=multiple)
        y.backward(grad)
        sync()
        times.append(time.perf_counter() - t0)
    outputs[name] = y.detach().float()
    width = D + -D % multiple
    print(f"{name:<20} {1000 * statistics.median(times[1:]):8.2f} ms   backends for width {width}: {backends(width)}")
a, b = outputs.values()
print(f"largest |difference| of the outputs: {(a - b).abs().max().item():.2e} (bf16: ~{2 ** -8:.1e} of the values)")
