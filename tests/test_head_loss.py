"""head_loss.py: the output layer's chunked loss (ChunkedHeadLoss) gives model.py's plain cross-entropy and its
gradients, eager and compiled, fused, under bf16 and fp16 autocast, with padded rows and unscored positions."""

import pytest
import torch
import torch.nn.functional as F

import head_loss
from head_loss import HeadLoss
from model import GPT, GPTConfig
from test_model import ALL, tiny


def loss_and_grads(model, x, y, train):
    model.zero_grad()
    model.train(train)
    with torch.enable_grad():
        logits, loss = model(x, y)
    loss.backward()
    return logits, loss.item(), {n.removeprefix('_orig_mod.').removeprefix('gpt.'): p.grad.clone() for n, p in model.named_parameters()
                                 if p.grad is not None}


@pytest.mark.parametrize('variant', ALL)
def test_chunked_loss_equals_the_plain_cross_entropy(variant, monkeypatch):
    """Training mode computes the loss a few rows at a time (ChunkedHeadLoss, no (B, T, V) logits): the loss and
    every gradient equal eval mode's plain cross-entropy of the full logits, with ignored positions, in fp32."""
    monkeypatch.setattr(head_loss, 'LOSS_CHUNK', 37 * 5)               # 5 rows per chunk: 7 chunks of 32 rows
    torch.manual_seed(0)
    gpt = tiny(variant, vocab_size=37, block_size=8)
    x, y = torch.randint(0, 37, (4, 8)), torch.randint(0, 37, (4, 8))
    y[:, :3] = -1
    y[0] = -1
    none, loss, grads = loss_and_grads(HeadLoss(gpt), x, y, train=True)
    logits, plain, plain_grads = loss_and_grads(gpt, x, y, train=False)
    assert none is None and logits.shape == (4, 8, 37)
    assert abs(loss - plain) <= 1e-5 * plain and grads.keys() == plain_grads.keys()
    for name, g in plain_grads.items():
        torch.testing.assert_close(grads[name], g, rtol=1e-5, atol=1e-5 * g.abs().max().item())


def test_chunked_loss_compiled_and_with_nothing_scored(monkeypatch):
    """A compiled model (whose head stays eager, chunked_head_loss) gives the eager model's loss and gradients,
    unscored rows dropped before the head in both. With no target at all the loss is 0."""
    monkeypatch.setattr(head_loss, 'LOSS_CHUNK', 37 * 5)               # 5 rows per chunk
    torch.manual_seed(0)
    gpt = tiny('standard', vocab_size=37, block_size=8)
    x, y = torch.randint(0, 37, (2, 8)), torch.randint(0, 37, (2, 8))
    y[:, ::2] = -1
    _, eager, grads = loss_and_grads(HeadLoss(gpt), x, y, train=True)
    _, compiled, compiled_grads = loss_and_grads(torch.compile(HeadLoss(gpt)), x, y, train=True)
    assert abs(compiled - eager) <= 1e-5 * eager
    for name, g in grads.items():
        torch.testing.assert_close(compiled_grads[name], g, rtol=1e-4, atol=1e-6)
    _, loss = HeadLoss(gpt).train()(x, torch.full_like(y, -1))
    assert loss.item() == 0.0


@pytest.mark.parametrize('autocast', [None, torch.bfloat16, torch.float16])
def test_fused_softmax_step_is_the_eager_one(autocast):
    """fused=True (HeadLoss(fused=True): each chunk's softmax and gradient compiled, softmax_xent_grad_fused) gives the
    eager in-place loop's loss and gradients: several chunks and a shorter last one, rows without a target,
    padded columns (n_valid < V), a head scale; in fp32 and under bf16 and fp16 autocast."""
    from head_loss import chunked_head_loss
    torch.manual_seed(0)
    x = torch.randn(70, 16, requires_grad=True)
    w = torch.randn(40, 16, requires_grad=True)
    t = torch.randint(0, 33, (70,))
    t[::6] = -1
    results = []
    for fused in (False, True):
        with torch.autocast('cpu', dtype=autocast or torch.bfloat16, enabled=autocast is not None):
            loss = chunked_head_loss(x, w, t, 0.5, 32, 33, fused)          # chunks of 32, 32 and 6 rows
        loss.backward()
        results.append((loss.detach(), x.grad, w.grad))
        x.grad = w.grad = None
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6 * b.abs().max().item())


def test_fused_loss_in_a_compiled_model():
    """HeadLoss(fused=True) inside a compiled model (the compiled softmax step called from the eager head): the eager
    model's loss and gradients."""
    torch.manual_seed(0)
    gpt = tiny('standard', vocab_size=37, block_size=8)
    x, y = torch.randint(0, 37, (2, 8)), torch.randint(0, 37, (2, 8))
    y[:, :3] = -1
    _, eager, grads = loss_and_grads(HeadLoss(gpt), x, y, train=True)
    _, fused, fused_grads = loss_and_grads(torch.compile(HeadLoss(gpt, fused=True)), x, y, train=True)
    assert abs(fused - eager) <= 1e-5 * eager
    for name, g in grads.items():
        torch.testing.assert_close(fused_grads[name], g, rtol=1e-4, atol=1e-6)


def test_add_widened_adds_block_by_block():
    from head_loss import add_widened
    acc, x = torch.randn(10, 3), torch.randn(10, 3).bfloat16()
    want = acc + x.float()
    add_widened(acc, x, torch.empty(4, 3))                            # blocks of 4, 4 and 2 rows
    assert torch.equal(acc, want)


def test_chunked_loss_scales_its_gradients_once():
    """The gradients ChunkedHeadLoss forms in its forward are scaled by the loss's incoming gradient (train.py's
    loss / grad_accum); a second backward through the same loss raises instead of giving a wrong gradient."""
    torch.manual_seed(0)
    gpt = tiny('standard', vocab_size=37, block_size=8)
    x, y = torch.randint(0, 37, (2, 8)), torch.randint(0, 37, (2, 8))
    gpt = HeadLoss(gpt)
    _, _, grads = loss_and_grads(gpt, x, y, train=True)
    gpt.zero_grad()
    _, loss = gpt(x, y)
    (loss / 4).backward(retain_graph=True)
    for name, p in gpt.named_parameters():
        torch.testing.assert_close(p.grad, grads[name.removeprefix('gpt.')] / 4)
    with pytest.raises(RuntimeError, match='ChunkedHeadLoss: a second backward'):
        loss.backward()


def test_scored_only_logits_are_the_full_logits_at_scored_positions():
    torch.manual_seed(0)
    gpt = tiny('mixit', vocab_size=37, block_size=8).eval()
    x, y = torch.randint(0, 37, (3, 8)), torch.full((3, 8), -1)
    y[0, 7], y[1, 2], y[1, 5] = 4, 9, 36
    with torch.no_grad():
        full, loss = gpt(x, y)
        scored, scored_loss = HeadLoss(gpt).eval()(x, y, scored_only=True)
    assert scored.shape == (3, 37)
    torch.testing.assert_close(scored, full[y >= 0])
    torch.testing.assert_close(scored_loss, loss)



@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.float64])
def test_cross_entropy_in_chunks_is_the_mean_over_scored_rows(dtype, monkeypatch):
    """head_loss.cross_entropy widens and sums a chunk of rows at a time: the mean of F.cross_entropy over the scored
    rows of the widened logits, whatever the chunking (rows split unevenly, a chunk with no scored row);
    nan when no row is scored."""
    monkeypatch.setattr(head_loss, 'LOSS_CHUNK', 37 * 4)               # 4 rows per chunk: 6 chunks of 21 rows
    torch.manual_seed(0)
    logits, y = (3 * torch.randn(3, 7, 37)).to(dtype), torch.randint(0, 37, (3, 7))
    y[0, :5] = -1                                                     # the first chunk scores no row
    y[2, 3] = -1
    wide = torch.float64 if dtype == torch.float64 else torch.float32
    loss = head_loss.cross_entropy(logits, y)
    assert loss.dtype == wide
    torch.testing.assert_close(loss, F.cross_entropy(logits.to(wide).flatten(0, 1), y.flatten(), ignore_index=-1))
    assert head_loss.cross_entropy(logits, torch.full_like(y, -1)).isnan()

@pytest.mark.parametrize('device', ['cpu', pytest.param('cuda', marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason='needs CUDA'))])
def test_chunked_loss_under_bf16_autocast(device, monkeypatch):
    """Under autocast the chunked head multiplies in bf16 (W cast once) and takes the log-softmax in fp32: loss
    and gradients near the plain path's under the same autocast, over several chunks, with a head scale."""
    monkeypatch.setattr(head_loss, 'LOSS_CHUNK', 37 * 5)               # 5 rows per chunk: 7 chunks of 32 rows
    monkeypatch.setattr(head_loss, 'LOSS_CHUNK_GPU', 37 * 5)
    torch.manual_seed(0)
    gpt = tiny('mixit', vocab_size=37, block_size=8).to(device)      # head scale sqrt(512 / 16)
    x, y = torch.randint(0, 37, (4, 8), device=device), torch.randint(0, 37, (4, 8), device=device)
    y[:, :2] = -1
    with torch.autocast(device, dtype=torch.bfloat16):
        _, loss, grads = loss_and_grads(HeadLoss(gpt), x, y, train=True)
        _, plain, plain_grads = loss_and_grads(gpt, x, y, train=False)
    assert abs(loss - plain) <= 2e-2 * plain
    for name, g in plain_grads.items():
        assert grads[name].dtype == g.dtype == torch.float32
        torch.testing.assert_close(grads[name], g, rtol=5e-2, atol=5e-2 * g.abs().max().item())


@pytest.mark.parametrize('device', ['cpu', pytest.param('cuda', marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason='needs CUDA'))])
def test_chunked_loss_under_fp16_autocast_keeps_small_gradients(device):
    """float16 (with a GradScaler's loss scale): d loss / d logits, about 1 / (V N) per entry, is below float16's
    range, and the chunked head forms it before the scale arrives, so its gradient matmuls run in fp32: every
    row of W gets the softmax part of its gradient, as the plain path's scaled backward does."""
    from head_loss import chunked_head_loss
    torch.manual_seed(0)
    N, C, V, S = 2048, 8, 16384, 2.0 ** 16              # 1 / (V N) = 3e-8 flushes to zero in float16
    x = torch.randn(N, C, device=device, requires_grad=True)
    w = (0.02 * torch.randn(V, C, device=device)).requires_grad_()
    t = torch.randint(0, V, (N,), device=device)
    t[:10] = -1
    grads = []
    for chunked in (True, False):
        with torch.autocast(device, dtype=torch.float16):
            loss = chunked_head_loss(x, w, t, 1.5, 333) if chunked else \
                F.cross_entropy(1.5 * (x @ w.t()).float(), t, ignore_index=-1)
        (S * loss).backward()
        grads.append((x.grad / S, w.grad / S))
        x.grad = w.grad = None
    (gx, gw), (px, pw) = grads
    assert (gw == 0).float().mean() < 1e-3 and (pw == 0).float().mean() < 1e-3       # no flushed entries
    torch.testing.assert_close(gw, pw, rtol=2e-2, atol=2e-2 * pw.abs().max().item())
    torch.testing.assert_close(gx, px, rtol=2e-2, atol=2e-2 * px.abs().max().item())


@pytest.mark.parametrize('chunk', [5, 10 ** 6])        # several chunks, one
def test_padded_output_layer_is_the_unpadded_model(chunk, monkeypatch):
    """vocab_multiple pads the output layer's rows (nanoGPT's 50,304): with the same weights in the first
    vocab_size rows, the padded model has the unpadded one's logits, training loss and gradients, and its padded
    rows get no gradient (their logits are -inf to the softmax)."""
    monkeypatch.setattr(head_loss, 'LOSS_CHUNK', chunk * 64)
    torch.manual_seed(0)
    plain = GPT(GPTConfig(vocab_size=37, block_size=8, n_layer=1, n_head=2, n_embd=16))
    padded = GPT(GPTConfig(vocab_size=37, block_size=8, n_layer=1, n_head=2, n_embd=16, vocab_multiple=16))
    assert padded.lm_head.weight.shape == (48, 16) and padded.transformer.wte.weight.shape == (37, 16)
    state = plain.state_dict()
    state['lm_head.weight'] = torch.cat([state['lm_head.weight'], torch.randn(11, 16)])
    padded.load_state_dict(state)
    x, y = torch.randint(0, 37, (3, 8)), torch.randint(0, 37, (3, 8))
    y[0, :3] = -1
    losses = []
    for m in (plain, padded):
        _, loss = HeadLoss(m)(x, y)                       # training mode: ChunkedHeadLoss
        loss.backward()
        losses.append(loss)
        m.eval()
        logits, eval_loss = m(x, y)
        torch.testing.assert_close(eval_loss, loss.detach())
        assert logits.shape == (3, 8, 37)
    torch.testing.assert_close(losses[0], losses[1])
    torch.testing.assert_close(padded.lm_head.weight.grad[:37], plain.lm_head.weight.grad)
    assert (padded.lm_head.weight.grad[37:] == 0).all()
    torch.testing.assert_close(padded.transformer.wte.weight.grad, plain.transformer.wte.weight.grad)
    torch.testing.assert_close(plain(x)[0], padded(x)[0])
    with pytest.raises(ValueError, match='vocab_multiple'):
        GPTConfig(vocab_multiple=0)
