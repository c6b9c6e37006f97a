"""model.py: variants freeze what they claim, MixiT's mixing is what eq. 2.3 says, every variant is causal,
and the parameter counts reproduce paper 1's Table 4."""

import os

import pytest
import torch
import torch.nn.functional as F

from model import GPT, AuthorsMixit, GPTConfig, VARIANTS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PAPER1 = ('standard', 'frozen_qk', 'frozen_mlp', 'mixit')
ALL = tuple(VARIANTS)                  # a new row of VARIANTS is tested by every test over ALL


def tiny(variant, **kw):
    torch.manual_seed(0)
    args = dict(vocab_size=11, block_size=12, n_layer=2, n_head=2, n_embd=16, variant=variant, bias=True)
    args.update(kw)
    return GPT(GPTConfig.from_keys(**args))


@pytest.mark.parametrize('variant, counts', [
    ('standard', 790_400), ('frozen_mlp', 394_880), ('frozen_qk', 724_352), ('mixit', 724_736)])
def test_table4_parameter_counts(variant, counts):
    # paper 1, Table 4: n=128, L=2, 4 heads, V=1024, biases, untied head, MixiT position embedding of length 3
    model = GPT(GPTConfig(n_embd=128, n_layer=2, n_head=4, vocab_size=1024, bias=True, block_size=3, variant=variant))
    assert model.num_params()[0] == counts


def trainable_groups(model):
    """The set of module kinds that hold trainable parameters."""
    kinds = set()
    for name, p in model.named_parameters():
        if p.requires_grad:
            for kind in ('wte', 'wpe', 'lm_head', 'c_q', 'c_k', 'c_v', 'attn.c_proj', 'mlp', 'ln'):
                if kind in name:
                    kinds.add(kind)
    return kinds


TRAINABLE = {  # each variant's trainable parameter groups (trainable_groups' names)
    'standard': {'wte', 'lm_head', 'c_q', 'c_k', 'c_v', 'attn.c_proj', 'mlp', 'ln'},
    'frozen_qk': {'wte', 'lm_head', 'c_v', 'attn.c_proj', 'mlp', 'ln'},
    'frozen_mlp': {'wte', 'lm_head', 'c_q', 'c_k', 'c_v', 'attn.c_proj', 'ln'},
    'mixit': {'wte', 'wpe', 'lm_head', 'c_v', 'attn.c_proj', 'mlp', 'ln'},
    'random': {'wte', 'wpe', 'lm_head'},
    'universal': {'wte', 'lm_head'},
}


@pytest.mark.parametrize('variant', ALL)
def test_gradients_reach_exactly_the_trainable_parameters(variant):
    if variant not in TRAINABLE:
        pytest.fail(f"variant {variant!r} is new: add its trainable parameter groups to TRAINABLE in "
                    f"tests/test_model.py (docs/fork.md#add-a-variant)")
    expected = TRAINABLE[variant]
    model = tiny(variant)
    assert trainable_groups(model) == expected
    x = torch.randint(0, 11, (3, 12))
    model(x, x)[1].backward()
    for name, p in model.named_parameters():
        if p.requires_grad:
            assert p.grad is not None and p.grad.abs().sum() > 0, name
        else:
            assert p.grad is None, name


@pytest.mark.parametrize('variant', ALL)
def test_frozen_parameters_unchanged_by_optimizer(variant):
    model = tiny(variant)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), 'cpu')
    in_optimizer = {id(p) for g in opt.param_groups for p in g['params']}
    for _ in range(3):
        x = torch.randint(0, 11, (4, 12))
        model(x, x)[1].backward()
        opt.step()
        opt.zero_grad()
    for name, p in model.named_parameters():
        assert (id(p) in in_optimizer) == p.requires_grad, name
        changed = not torch.equal(before[name], p)
        assert changed == p.requires_grad, name


def test_mixit_has_no_query_key_and_static_buffers():
    model = tiny('mixit')
    names = [n for n, _ in model.named_parameters()]
    assert not any('c_q' in n or 'c_k' in n for n in names)
    assert all('.A' not in n for n in names)
    assert 'transformer.h.0.attn.A' in dict(model.named_buffers())
    assert 'transformer.h.0.attn.A' not in model.state_dict()      # regenerated from mixit_seed
    again = tiny('mixit')
    assert torch.equal(model.transformer.h[1].attn.A, again.transformer.h[1].attn.A)


@pytest.mark.parametrize('scale', ['authors', 'paper'])
@pytest.mark.parametrize('sink', [True, False])
@pytest.mark.parametrize('block', ['authors', 'base'])
def test_mixit_rows_sum_to_one_and_are_causal(scale, sink, block):
    model = tiny('mixit', n_head=4, block_size=32, mixit_scale=scale, mixit_sink_head=sink, mixit_block=block)
    for layer in model.transformer.h:
        A = layer.attn.A
        assert A.shape == (4, 32, 32)
        random = A[1:] if sink else A                            # the sink head is fixed, the others random
        torch.testing.assert_close(random.sum(-1), torch.ones(len(random), 32), atol=1e-5, rtol=0)
        assert torch.all(A.triu(1) == 0)
        assert not torch.allclose(A[1], torch.eye(32))           # random, not the identity
    if sink:
        S = model.transformer.h[0].attn.A[0]
        expected = 0.5 * torch.eye(32)
        if block == 'authors':
            expected[:, 0] = 0.5                                 # the authors': entry (0, 0) is 0.5
        else:
            expected[:, 0] += 0.5                                # every row sums to 1
        assert torch.equal(S, expected)


def test_mixit_scale_paper_variance():
    # off-diagonal causal entries are sigma (M_ij - c_i) with sigma = 1/sqrt(n m): variance ~ 1/(n m)
    model = tiny('mixit', n_head=8, n_embd=64, block_size=64, mixit_scale='paper', mixit_sink_head=False)
    A = model.transformer.h[0].attn.A
    lower = torch.tril(torch.ones(64, 64, dtype=torch.bool), -1)
    lower[:16] = False                                           # rows with a long causal support
    var = A[:, lower].var().item() * 64 * 64
    assert 0.8 < var < 1.2


@pytest.mark.parametrize('variant', ALL)
def test_causality(variant):
    model = tiny(variant).eval()
    x = torch.randint(0, 11, (2, 12))
    y = x.clone()
    y[:, 7:] = (y[:, 7:] + 1 + torch.randint(0, 9, (2, 5))) % 11   # change every token after position 6
    with torch.no_grad():
        a, _ = model(x, x)
        b, _ = model(y, y)
    torch.testing.assert_close(a[:, :7], b[:, :7], atol=1e-6, rtol=1e-6)
    assert not torch.allclose(a[:, 7:], b[:, 7:])


def test_mixit_short_sequence_uses_top_left_block():
    model = tiny('mixit').eval()
    x = torch.randint(0, 11, (2, 12))
    with torch.no_grad():
        full, _ = model(x, x)
        short, _ = model(x[:, :5], x[:, :5])
    torch.testing.assert_close(full[:, :5], short, atol=1e-6, rtol=1e-6)


def test_universal_flags_and_looped():
    model = tiny('universal', head_dim=3, looped=True, n_layer=3)
    assert len(model.transformer.h) == 1
    attn = model.transformer.h[0].attn
    assert attn.c_proj is None and attn.scale == 1.0
    assert attn.c_q.weight.shape == (2 * 3, 16) and attn.c_v.weight.shape == (2 * 16, 16)
    assert model.transformer.h[0].mlp is None
    bound = 1 / 16 ** 0.5                                           # PyTorch Linear default init
    assert attn.c_v.weight.abs().max() <= bound


def test_bad_flags_raise_clear_errors():
    with pytest.raises(ValueError, match='unknown variant'):
        GPTConfig(variant='mixiT')
    with pytest.raises(ValueError, match='norm'):
        GPTConfig(norm='batch')
    with pytest.raises(ValueError, match='block_size'):
        tiny('standard')(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match='qk_init_std'):
        GPTConfig(qk_init_std=0.0)
    with pytest.raises(ValueError, match="each head's value"):          # head_dim does not widen the values
        GPTConfig(n_embd=64, n_head=128, head_dim=16)
    assert GPTConfig(variant='universal', n_embd=64, n_head=128, head_dim=16).v_dim == 64   # summed heads: n_embd


def test_qk_init_std_sets_only_query_and_key():
    torch.manual_seed(0)
    model = GPT(GPTConfig(variant='frozen_qk', vocab_size=11, block_size=12, n_layer=2, n_head=4, n_embd=256,
                          qk_init_std=0.08))
    attn = model.transformer.h[1].attn
    assert attn.c_q.weight.std().item() == pytest.approx(0.08, rel=0.02)
    assert attn.c_k.weight.std().item() == pytest.approx(0.08, rel=0.02)
    assert attn.c_v.weight.std().item() == pytest.approx(0.02, rel=0.02)
    assert not attn.c_q.weight.requires_grad


@pytest.mark.parametrize('variant', ALL)
def test_attention_probs_are_what_forward_applies(variant):
    model = tiny(variant, n_head=4, n_embd=32)
    idx = torch.randint(0, 11, (3, 12))
    probs = model.attention_probs(idx)
    assert len(probs) == 2 and probs[0].shape == (3, 4, 12, 12)
    x, rotation = model.embed(idx)
    block = model.blocks()[0]
    h = block.ln_1(x)
    attn = block.attn
    w = attn.width_scale                                               # the authors' MixiT block scales c_v, c_proj
    v = w * attn.c_v(h).view(3, 12, 4, attn.v_dim).transpose(1, 2)
    y = probs[0] @ v                                                   # (B, H, T, v_dim)
    y = y.sum(dim=1) if attn.c_proj is None else w * attn.c_proj(y.transpose(1, 2).reshape(3, 12, -1))
    torch.testing.assert_close(y, attn(h, rotation), atol=1e-5, rtol=1e-4)
    for p in probs:
        if variant == 'mixit':                                         # the sink head's row 0 sums to 0.5
            p = p[:, 1:]
        torch.testing.assert_close(p.sum(-1), torch.ones(len(p), p.shape[1], 12))
        assert (p.triu(1) == 0).all()


@pytest.mark.parametrize('d, causal', [(4, True), (6, False), (8, True)])
def test_narrow_heads_padded_for_the_fused_kernels_are_the_same_attention(d, causal, monkeypatch):
    """sdpa's zero-padding of q, k, v (done on a GPU in 16 bits, forced here) changes neither the output nor
    the gradients: the padded columns add nothing to the scores, and the output is cut back to d. On a CPU
    sdpa pads nothing."""
    from model import sdpa
    widths, plain_sdpa = [], F.scaled_dot_product_attention
    monkeypatch.setattr(F, 'scaled_dot_product_attention', lambda q, *a, **kw: widths.append(q.shape[-1]) or
                        plain_sdpa(q, *a, **kw))
    torch.manual_seed(0)
    q, k, v = (torch.randn(3, 5, 7, d, dtype=torch.float64, requires_grad=True) for _ in range(3))
    grads = []
    for multiple in (1, 8):
        y = sdpa(q, k, v, causal, 0.5, multiple=multiple)
        assert y.shape == (3, 5, 7, d)
        grads.append((y, *torch.autograd.grad((y * y.detach().cos()).sum(), (q, k, v))))
    for plain, padded in zip(*grads):
        torch.testing.assert_close(padded, plain)
    sdpa(q.bfloat16(), k.bfloat16(), v.bfloat16(), causal, 0.5)
    assert widths == [d, 8, d]


def test_model_py_imports_alone(tmp_path):
    """model.py needs torch only: copied alone into an empty folder it imports and builds every variant."""
    import shutil
    import subprocess
    import sys
    shutil.copy(os.path.join(ROOT, 'model.py'), tmp_path)
    code = ("import model\nfor v in model.VARIANTS:\n    model.GPT(model.GPTConfig(variant=v, n_layer=1, n_head=2, "
            "n_embd=8, vocab_size=5, block_size=4))\nprint('ok')")
    r = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True,
                       env={'PATH': os.environ.get('PATH', '')})
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stderr[-2000:]


def test_every_variant_is_one_row_of_the_table():
    """GPTConfig's flags are BASE overridden by the variant's row, and a flag set alone wins over the row."""
    from model import BASE
    for variant, row in VARIANTS.items():
        c = GPTConfig(variant=variant, n_layer=1, n_head=2, n_embd=8)
        assert {k: c.key(k) for k in BASE} == {**BASE, **row}
    assert GPTConfig(variant='mixit', rope=True, n_head=2, n_embd=8).rope is True


def rms(h, w):
    return h / (h.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt() * w


def test_mixit_block_is_the_authors_block_written_out():
    """mixit_block='authors' (the default for MixiT), one layer in float64 against the formulas of the authors'
    block: h1 = s h + sqrt(1-s^2) c_o(A c_v(rms h)), h2 = s h1 + sqrt(1-s^2) c_d(gain leaky(c_g x) c_u x) with
    every linear's output times sqrt(512 / n) (down: sqrt(1 / 4n)); the head times sqrt(512 / n); the sink head
    0.5 I with column 0 = 0.5; every linear N(0, 0.02)."""
    n, H, T, s = 16, 2, 5, 0.5 ** 0.5
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(variant='mixit', n_layer=1, n_head=H, n_embd=n, vocab_size=11, block_size=T)).double()
    assert gpt.config.authors.mixit_block == 'authors' and GPTConfig(variant='standard').authors.mixit_block == 'base'
    blk = gpt.transformer.h[0]
    A = blk.attn.A.double()
    sink = 0.5 * torch.eye(T)
    sink[:, 0] = 0.5
    assert torch.equal(A[0], sink.double()) and torch.allclose(A[1].sum(-1), torch.ones(T, dtype=torch.float64))
    W = {k: v for k, v in gpt.named_parameters()}
    h = torch.randn(3, T, n, dtype=torch.float64)
    wide, down = (512 / n) ** 0.5, (1 / (4 * n)) ** 0.5
    v = wide * rms(h, W['transformer.h.0.ln_1.weight']) @ W['transformer.h.0.attn.c_v.weight'].T
    v = v.view(3, T, H, n // H).transpose(1, 2)                                 # (B, H, T, n/H)
    a = wide * (A @ v).transpose(1, 2).reshape(3, T, n) @ W['transformer.h.0.attn.c_proj.weight'].T
    h1 = s * h + (1 - s * s) ** 0.5 * a
    x = rms(h1, W['transformer.h.0.ln_2.weight'])
    slope = 1 - 1 / n ** 0.5
    gain = (2 / (1 + slope ** 2)) ** 0.5
    g, u = wide * x @ W['transformer.h.0.mlp.c_gate.weight'].T, wide * x @ W['transformer.h.0.mlp.c_up.weight'].T
    f = down * (gain * torch.where(g > 0, g, slope * g) * u) @ W['transformer.h.0.mlp.c_proj.weight'].T
    h2 = s * h1 + (1 - s * s) ** 0.5 * f
    assert torch.allclose(blk(h, None), h2, rtol=1e-12, atol=1e-12)
    assert torch.allclose(gpt.head(h2), wide * h2 @ W['lm_head.weight'].T, rtol=1e-12, atol=1e-12)
    std = W['transformer.h.0.mlp.c_proj.weight'].std().item()       # no 1/sqrt(2L) on output projections
    assert 0.015 < std < 0.025


def test_depth_scaled_block_is_the_authors_language_model_runners_written_out():
    """depth_alpha > 0 (the authors' Slurm language-model runner): h1 = h + (L0 / L)^alpha attn(rms h), h2 = h1 +
    (L0 / L)^alpha mlp(rms h1), the skip unscaled; MixiT's random heads mix without the identity, every causal row
    summing to 0, entries sigma (M_ij - c_i) with sigma = 1/sqrt(m); the sink head unchanged."""
    L, L0, m = 8, 4, 64
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(variant='mixit', n_layer=L, n_head=8, n_embd=64, vocab_size=11, block_size=m,
                        authors=AuthorsMixit(depth_alpha=1.0, base_n_layer=L0))).double()
    A = gpt.transformer.h[0].attn.A.double()
    torch.testing.assert_close(A[1:].sum(-1), torch.zeros(7, m, dtype=torch.float64), atol=1e-5, rtol=0)
    assert torch.all(A.triu(1) == 0)
    default = GPT(GPTConfig(variant='mixit', n_layer=L, n_head=8, n_embd=64, vocab_size=11, block_size=m))
    assert torch.equal(A[0], default.transformer.h[0].attn.A[0].double())          # the sink head as before
    lower = torch.tril(torch.ones(m, m, dtype=torch.bool), -1)
    lower[:16] = False                                            # rows with a long causal support
    assert 0.8 < A[1:, lower].var().item() * m < 1.2              # variance 1/m
    blk = gpt.transformer.h[3]
    h = torch.randn(3, m, 64, dtype=torch.float64)
    h1 = h + (L0 / L) * blk.attn(blk.ln_1(h), None)
    h2 = h1 + (L0 / L) * blk.mlp(blk.ln_2(h1))
    assert torch.allclose(blk(h, None), h2, rtol=1e-12, atol=1e-12)
    std = GPT(GPTConfig(variant='standard', n_layer=2, n_embd=16, n_head=2, vocab_size=11, block_size=5,
                        authors=AuthorsMixit(depth_alpha=2.0, base_n_layer=4))).transformer.h[0]
    assert (std.skip, std.branch) == (1.0, 4.0)                   # any block: (4 / 2)^2


def test_base_block_is_the_llama_block_written_out():
    """mixit_block='base' (frozen_qk here): h1 = h + c_o(softmax(q k^T / sqrt(d)) v), h2 = h1 + c_d(silu(c_g x)
    c_u x), rotary on q and k; output projections N(0, 0.02 / sqrt(2L))."""
    n, H, T, L = 16, 2, 5, 2
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(variant='frozen_qk', n_layer=L, n_head=H, n_embd=n, vocab_size=11, block_size=T)).double()
    blk, d = gpt.transformer.h[0], n // H
    W = {k: v for k, v in gpt.named_parameters()}
    h = torch.randn(3, T, n, dtype=torch.float64)
    x = rms(h, W['transformer.h.0.ln_1.weight'])
    heads = lambda w: (x @ w.T).view(3, T, H, d).transpose(1, 2)
    cos, sin = gpt.rope_cos[:T].double(), gpt.rope_sin[:T].double()

    def rot(z):
        a, b = z[..., :d // 2], z[..., d // 2:]
        return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)

    q, k = rot(heads(W['transformer.h.0.attn.c_q.weight'])), rot(heads(W['transformer.h.0.attn.c_k.weight']))
    S = (q @ k.transpose(-1, -2) / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float('-inf'))
    y = (S.softmax(-1) @ heads(W['transformer.h.0.attn.c_v.weight'])).transpose(1, 2).reshape(3, T, n)
    h1 = h + y @ W['transformer.h.0.attn.c_proj.weight'].T
    x = rms(h1, W['transformer.h.0.ln_2.weight'])
    gate, up = x @ W['transformer.h.0.mlp.c_gate.weight'].T, x @ W['transformer.h.0.mlp.c_up.weight'].T
    f = (torch.nn.functional.silu(gate) * up) @ W['transformer.h.0.mlp.c_proj.weight'].T
    assert torch.allclose(blk(h, (cos, sin)), h1 + f, rtol=1e-12, atol=1e-12)
    std = torch.cat([W[f'transformer.h.{l}.mlp.c_proj.weight'].flatten() for l in range(L)]).std().item()
    assert abs(std - 0.02 / (2 * L) ** 0.5) < 0.002


# ---- the authors' sentiment classifier: non-causal mixing and attention, a class head, a frozen pad

def authors_noncausal_mixing(H, m, n_h, seed, layer):
    """trainer_classifier.py's matrix (modeling_llama.py, is_causal=False) from the draws mixit_matrices makes:
    noise = sigma M, drift_i = sum_j noise_ij / (i + 1) over the dense row, A = I + noise - drift, no tril; the
    sink head 0.5 I with column 0 set to 0.5."""
    g = torch.Generator().manual_seed(seed * 100_003 + layer)
    M = torch.randn(H, m, m, generator=g)
    u = torch.rand(H, 1, 1, generator=g)
    sigma = 1 / (m * n_h) ** 0.5 + u * (1 / m ** 0.5 - 1 / (m * n_h) ** 0.5)
    noise = sigma * M
    drift = (noise.sum(-1) / torch.arange(1, m + 1)).unsqueeze(-1)
    A = torch.eye(m) + (noise - drift)
    sink = 0.5 * torch.eye(m)
    sink[:, 0] = 0.5
    A[0] = sink
    return A, sigma, M


def test_noncausal_mixit_is_the_authors_classifier_matrix():
    H, m = 4, 64
    model = tiny('mixit', n_head=H, n_embd=32, block_size=m, causal=False)
    for layer, block in enumerate(model.transformer.h):
        expected, sigma, M = authors_noncausal_mixing(H, m, 32 // H, 0, layer)
        A = block.attn.A
        torch.testing.assert_close(A, expected, atol=1e-6, rtol=0)
        upper = torch.ones(m, m, dtype=torch.bool).triu(1)
        assert (A[1:, upper] != 0).all()                                # dense: every position mixes every other
        i = torch.arange(m)
        row_sums = 1 + sigma[1:, :, 0] * (1 - m / (i + 1)) * M[1:].sum(-1)   # not centred: 1 only at i = m - 1
        torch.testing.assert_close(A[1:].sum(-1), row_sums, atol=1e-5, rtol=1e-5)
        S = M[1:, 0].sum(-1, keepdim=True)                              # row 0's drift is its whole sum
        off = A[1:, 0, 1:]                                              # row 0 off the diagonal: sigma (M_0j - S)
        torch.testing.assert_close(off, sigma[1:, 0] * (M[1:, 0, 1:] - S), atol=1e-6, rtol=1e-5)
        one_signed = S.squeeze(1).abs() > M[1:, 0].abs().max(-1).values  # then every entry has the sign of -S
        assert one_signed.any()
        for h in one_signed.nonzero().flatten():
            assert (torch.sign(off[h]) == -torch.sign(S[h])).all()
        assert torch.equal(A[0, :, 0], torch.full((m,), 0.5)) and A[0, 0, 0] == 0.5


@pytest.mark.parametrize('variant', PAPER1)
def test_noncausal_models_see_later_tokens_and_probs_are_forward(variant):
    model = tiny(variant, causal=False, n_head=4, n_embd=32).eval()
    x = torch.randint(0, 11, (2, 12))
    y = x.clone()
    y[:, 11] = (y[:, 11] + 1) % 11                                      # change only the last token
    with torch.no_grad():
        a, _ = model(x, x)
        b, _ = model(y, y)
    assert not torch.allclose(a[:, 0], b[:, 0])                          # position 0 sees it
    probs = model.attention_probs(x)
    block = model.blocks()[0]
    h, rotation = block.ln_1(model.embed(x)[0]), model.embed(x)[1]
    attn, w = block.attn, block.attn.width_scale
    v = w * attn.c_v(h).view(2, 12, 4, attn.v_dim).transpose(1, 2)
    out = w * attn.c_proj((probs[0] @ v).transpose(1, 2).reshape(2, 12, -1))
    torch.testing.assert_close(out, attn(h, rotation), atol=1e-5, rtol=1e-4)
    assert (probs[0][:, 1:, 0, 1:] != 0).all()                          # row 0 takes from later positions


def test_class_head_loss_and_frozen_pad_embedding():
    model = tiny('mixit', causal=False, n_class=2, pad_id=10, base_width=1)
    assert model.lm_head.weight.shape == (2, 16)
    assert model.head_scale == (1 / 16) ** 0.5                          # the authors' score: sqrt(1 / n)
    assert (model.transformer.wte.weight[10] == 0).all()
    x = torch.randint(0, 10, (3, 12))
    x[:, 8:] = 10                                                        # right-padded
    y = torch.full((3, 12), -1)
    y[:, 7] = torch.tensor([0, 1, 1])                                    # the label at the last text token
    model.eval()
    logits, loss = model(x, y)
    assert logits.shape == (3, 12, 2)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits[:, 7], y[:, 7]))
    model.train()
    _, train_loss = model(x, y)
    torch.testing.assert_close(train_loss, loss, atol=1e-5, rtol=1e-5)
    opt = model.configure_optimizers(0.01, 1e-2, (0.9, 0.999), 'cpu')
    train_loss.backward()
    assert (model.transformer.wte.weight.grad[10] == 0).all()
    opt.step()
    assert (model.transformer.wte.weight[10] == 0).all()                 # weight decay and Adam leave it at 0
    with pytest.raises(ValueError, match='pad_id'):
        GPTConfig(vocab_size=11, pad_id=11)


def test_flat_keys_and_the_authors_group_are_one_config():
    """A command line's and a checkpoint's flat keys (from_keys) fill GPTConfig.authors, to_keys gives them back,
    and the older value names read as the new ones (model.RENAMED)."""
    for variant in VARIANTS:
        c = GPTConfig.from_keys(variant=variant, n_layer=2, n_head=2, n_embd=8, depth_alpha=1.0, mixit_seed=4)
        assert (c.authors.depth_alpha, c.authors.mixit_seed) == (1.0, 4)
        assert GPTConfig.from_keys(**c.to_keys()) == c
    old = GPTConfig.from_keys(variant='frozen_qk', n_head=2, n_embd=8, mixit_block='code', mixit_scale='code')
    assert (old.authors.mixit_block, old.authors.mixit_scale) == ('authors', 'authors')
    with pytest.raises(ValueError, match="mixit_block must be 'authors' or 'base', got 'codes'"):
        GPTConfig.from_keys(mixit_block='codes')
    with pytest.raises(TypeError):
        GPTConfig.from_keys(mixit_colour=1)
