"""What only a GPU runs: bf16 autocast with fused AdamW, the chunked head in bf16, flash attention for the softmax
variants, MixiT's static matrices on the device, train.py compiled (one process, and two processes sharing one
GPU through gloo), and a checkpoint written on CUDA read back on a CPU. Every test skips without CUDA."""

import json
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from checkpoint import load_checkpoint
from head_loss import chunked_head_loss
from model import GPT, GPTConfig

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason='needs CUDA')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ['--task=retrieval', '--retrieval_vocab_size=32', '--retrieval_m_max=4', '--n_test=256', '--n_layer=2',
        '--n_head=2', '--n_embd=64', '--batch_size=16', '--eval_interval=10', '--log_interval=1', '--eval_iters=2',
        '--device=cuda', '--dtype=bfloat16', '--warmup_iters=2', '--learning_rate=3e-3']


def run(args, launcher=(sys.executable,)):
    r = subprocess.run([*launcher, 'train.py', *args], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def losses(out_dir):
    with open(os.path.join(out_dir, 'train_log.jsonl')) as f:
        return {r['iter']: r['loss'] for r in map(json.loads, f)}


def tiny(variant, **kw):
    return GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=2, n_embd=64, variant=variant, **kw)


def test_bf16_autocast_and_fused_adamw_learn_a_fixed_batch():
    torch.manual_seed(0)
    model = GPT(tiny('standard')).cuda()
    optimizer = model.configure_optimizers(0.0, 3e-3, (0.9, 0.95), 'cuda')
    assert optimizer.defaults['fused']
    x, y = torch.randint(0, 64, (8, 32), device='cuda'), torch.randint(0, 64, (8, 32), device='cuda')
    first = None
    for _ in range(30):
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        first = first if first is not None else loss.item()
    assert torch.isfinite(loss) and loss.item() < first - 1.0
    assert all(p.dtype == torch.float32 for p in model.parameters())         # autocast, not a bf16 model


@pytest.mark.parametrize('fused', [False, True])
def test_chunked_head_loss_equals_the_plain_path_in_bf16(fused):
    torch.manual_seed(0)
    N, C, V = 4096, 64, 50304
    x = torch.randn(N, C, device='cuda', requires_grad=True)
    w = (0.02 * torch.randn(V, C, device='cuda')).requires_grad_()
    t = torch.randint(0, V, (N,), device='cuda')
    t[:100] = -1
    grads, values = [], []
    for chunked in (True, False):
        with torch.autocast('cuda', dtype=torch.bfloat16):
            loss = chunked_head_loss(x, w, t, 1.0, 1000, fused=fused) if chunked else \
                F.cross_entropy((x @ w.t()).float(), t, ignore_index=-1)
        loss.backward()
        values.append(loss.detach())
        grads.append((x.grad, w.grad))
        x.grad = w.grad = None
    torch.testing.assert_close(values[0], values[1], rtol=1e-2, atol=1e-2)
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=3e-2, atol=3e-2 * b.abs().max().item())


@pytest.mark.parametrize('variant', ['standard', 'frozen_qk', 'frozen_mlp'])
def test_softmax_variants_run_on_flash_attention(variant):
    """With only the flash kernel allowed, forward and backward still run: SDPA chooses it for these models."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    model = GPT(tiny(variant)).cuda()
    x = torch.randint(0, 64, (4, 32), device='cuda')
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch.autocast('cuda', dtype=torch.bfloat16):
        _, loss = model(x, x)
    loss.backward()
    assert torch.isfinite(loss)


def test_narrow_heads_run_on_flash_attention():
    """The random transformer's heads of width 4 (config/table5_random.py), padded to 8 by model.sdpa, run with
    only the flash kernel allowed, in bf16 and fp16, and give the unpadded math kernel's output."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from model import sdpa
    torch.manual_seed(0)
    q, k, v = (torch.randn(4, 16, 33, 4, device='cuda') for _ in range(3))
    for dtype in (torch.bfloat16, torch.float16):
        h = [t.to(dtype).requires_grad_() for t in (q, k, v)]
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            y = sdpa(*h, True, 0.5)
        y.sum().backward()
        with sdpa_kernel(SDPBackend.MATH):
            ref = F.scaled_dot_product_attention(*h, is_causal=True, scale=0.5)
        torch.testing.assert_close(y, ref, atol=2e-2, rtol=2e-2)
    model = GPT(GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=16, n_embd=64, variant='random')).cuda()
    x = torch.randint(0, 64, (4, 32), device='cuda')
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch.autocast('cuda', dtype=torch.bfloat16):
        _, loss = model(x, x)
    loss.backward()
    assert torch.isfinite(loss)


def test_mixit_static_matrices_on_the_gpu_match_the_cpu():
    torch.manual_seed(0)
    cpu = GPT(tiny('mixit'))
    gpu = GPT(tiny('mixit')).cuda()
    gpu.load_state_dict(cpu.state_dict())
    assert gpu.transformer.h[0].attn.A.is_cuda
    torch.testing.assert_close(gpu.transformer.h[1].attn.A.cpu(), cpu.transformer.h[1].attn.A)
    x = torch.randint(0, 64, (4, 32))
    cpu.eval(), gpu.eval()
    torch.testing.assert_close(gpu(x.cuda(), x.cuda())[1].cpu(), cpu(x, x)[1], rtol=1e-4, atol=1e-4)
    with torch.autocast('cuda', dtype=torch.bfloat16):
        loss = gpu(x.cuda(), x.cuda())[1]
    assert abs(loss.item() - cpu(x, x)[1].item()) < 0.05


def test_compiled_train_py_one_process_and_two_sharing_the_gpu(tmp_path):
    """train.py compiled in bf16: one process, and two (gloo, one GPU) with the same global batch, log the same
    losses to bf16 tolerance; only rank 0 writes the checkpoint."""
    one, two = str(tmp_path / 'one'), str(tmp_path / 'two')
    run(TINY + ['--max_iters=10', '--micro_batch_size=8', f'--out_dir={one}'])
    run(TINY + ['--max_iters=10', '--ddp_backend=gloo', f'--out_dir={two}'],
        launcher=(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=2'))
    a, b = losses(one), losses(two)
    assert sorted(a) == sorted(b) == list(range(1, 11))
    for it in a:
        assert b[it] == pytest.approx(a[it], rel=2e-2, abs=2e-2), it
    assert os.path.isfile(os.path.join(two, 'ckpt.pt'))


def test_checkpoint_written_on_cuda_resumes_on_a_cpu(tmp_path):
    out = str(tmp_path / 'run')
    run(TINY + ['--max_iters=4', '--compile=False', f'--out_dir={out}'])
    ckpt = load_checkpoint(os.path.join(out, 'ckpt.pt'))
    assert all(t.device.type == 'cpu' for t in ckpt['model'].values())
    model = GPT(GPTConfig.from_keys(**ckpt['model_args']))
    model.load_state_dict(ckpt['model'])
    run([a for a in TINY if not a.startswith(('--device', '--dtype'))] +
        ['--device=cpu', '--dtype=float32', '--compile=False', '--max_iters=6', '--init_from=resume',
         f'--out_dir={out}'])
    assert sorted(losses(out)) == list(range(1, 7))
