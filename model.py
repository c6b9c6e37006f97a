"""
One decoder-only transformer and every variant the three papers study, each a few flags on the same model.

Base block (paper 1, §2): Llama style -- RMSNorm, causal multi-head attention with rotary embeddings,
gated MLP W_D(silu(W_G h) * W_U h). The variants are rows of the table VARIANTS below (paper 1, Table 1;
paper 2, §2; Zhong & Andreas 2024). Frozen parameters have requires_grad=False and never enter the optimizer;
MixiT's matrices are buffers. This file imports torch only: copy it alone into another project.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

# The base block's flags, and each variant's changes to them: the one place that defines a variant.
BASE = dict(attn='softmax', rope=True, pos_emb=False, score_scale=True, attn_out_proj=True, mlp=True, residual=True,
            norm='rms', init='normal', mixit_block='plain',
            freeze_qk=False, freeze_mlp=False, freeze_attn=False, freeze_norm=False)
FROZEN = dict(freeze_attn=True, freeze_mlp=True, freeze_norm=True)     # every block weight fixed at init
VARIANTS = {
    'standard':   dict(),                                              # everything trained
    'frozen_qk':  dict(freeze_qk=True),                                # W_Q, W_K of every layer fixed at init
    'frozen_mlp': dict(freeze_mlp=True),                               # W_G, W_U, W_D of every layer fixed at init
    'mixit':      dict(attn='mixit', rope=False, pos_emb=True,         # static random mixing A (paper 1, eq. 2.3)
                       mixit_block='code'),                            # in the authors' block (see Block)
    'random':     dict(rope=False, pos_emb=True, **FROZEN),            # only embeddings and head trained
    'universal':  dict(rope=False, score_scale=False, attn_out_proj=False, mlp=False, residual=False,
                       norm='none', init='uniform', **FROZEN),         # paper 2, §2: only E (wte), U (lm_head)
}


@dataclass
class GPTConfig:
    block_size: int = 256        # maximum sequence length (MixiT's m)
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 8
    n_embd: int = 512
    bias: bool = False           # biases in attention and MLP linears (paper 1's parameter counts need True)
    causal: bool = True          # False: every position attends to (MixiT: mixes) all block_size positions
    n_class: int = 0             # > 0: the head has n_class outputs (sequence classification), not vocab_size
    pad_id: int = -1             # >= 0: this token's embedding is zero and never trained (padding)
    vocab_multiple: int = 1      # the output layer's rows rounded up to a multiple of this (64: GPT-2's 50,257 ->
                                 # nanoGPT's 50,304) for aligned GPU matmuls; the extra logits are -inf, never used
    variant: str = 'standard'    # a row of VARIANTS: sets the flags below that are left at None
    # attention
    attn: str | None = None              # 'softmax' | 'mixit'
    rope: bool | None = None             # rotary embeddings on q and k
    pos_emb: bool | None = None          # learned absolute position embedding added to the token embedding
    head_dim: int = 0                    # q/k width per head (paper 2's d); 0 = n_embd // n_head
    score_scale: bool | None = None      # divide scores by sqrt(head_dim)
    attn_out_proj: bool | None = None    # False: each head's value is n_embd wide, heads summed, no W_O (paper 2)
    mixit_scale: str = 'code'            # 'code': sigma_h drawn as the authors' code; 'paper': 1/sqrt(n m)
    mixit_sink_head: bool = True         # head 0 of every layer attends to itself and token 1 (authors' code)
    mixit_block: str | None = None       # 'code': the authors' MixiT block (Block); 'plain': the base block
    skip_scaling: float = 0.5 ** 0.5     # mixit_block='code': h <- s h + sqrt(1 - s^2) f(h)
    depth_alpha: float = 0.0             # > 0: h <- h + (base_n_layer / n_layer)^depth_alpha f(h) in every block
    base_n_layer: int = 4                #   and MixiT's A without its identity (authors' Slurm LM runner; Block)
    activation_cminus: float = -1.0      # mixit_block='code': MLP LeakyReLU slope 1 + activation_cminus / sqrt(n)
    base_width: int = 512                # mixit_block='code': linear outputs times sqrt(base_width / fan_in)
    mixit_seed: int = 0                  # the mixing matrices are regenerated from this seed, not checkpointed
    # block
    mlp: bool | None = None
    residual: bool | None = None
    norm: str | None = None              # 'rms' | 'layer' | 'none'
    looped: bool = False                 # one block's weights reused by all n_layer layers
    init: str | None = None              # 'normal' (N(0, 0.02)) | 'uniform' (PyTorch Linear default) for blocks
    qk_init_std: float = 0.02            # std of W_Q, W_K under init='normal'
                                         # (docs/deviations.md#frozen-qk-score-scale)
    # what is frozen at init
    freeze_qk: bool | None = None
    freeze_mlp: bool | None = None
    freeze_attn: bool | None = None      # every attention weight (q, k, v, out)
    freeze_norm: bool | None = None

    def __post_init__(self):
        if self.n_class < 0 or self.pad_id >= self.vocab_size or self.vocab_multiple < 1:
            raise ValueError(f"need n_class >= 0, pad_id < vocab_size={self.vocab_size} and vocab_multiple >= 1, "
                             f"got n_class={self.n_class}, pad_id={self.pad_id}, vocab_multiple={self.vocab_multiple}")
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; choose from {', '.join(VARIANTS)}")
        for name, value in {**BASE, **VARIANTS[self.variant]}.items():   # a flag left at None: the variant's
            if getattr(self, name) is None:
                setattr(self, name, value)
        if self.attn not in ('softmax', 'mixit'):
            raise ValueError(f"attn must be 'softmax' or 'mixit', got {self.attn!r}")
        if self.norm not in ('rms', 'layer', 'none'):
            raise ValueError(f"norm must be 'rms', 'layer' or 'none', got {self.norm!r}")
        if self.init not in ('normal', 'uniform'):
            raise ValueError(f"init must be 'normal' or 'uniform', got {self.init!r}")
        if not self.qk_init_std > 0:
            raise ValueError(f"qk_init_std must be positive, got {self.qk_init_std}")
        if self.mixit_block not in ('code', 'plain'):
            raise ValueError(f"mixit_block must be 'code' or 'plain', got {self.mixit_block!r}")
        if not 0 < self.skip_scaling <= 1:
            raise ValueError(f"skip_scaling must be in (0, 1], got {self.skip_scaling}")
        if self.depth_alpha < 0 or self.base_n_layer < 1:
            raise ValueError(f"need depth_alpha >= 0 and base_n_layer >= 1, got depth_alpha={self.depth_alpha}, "
                             f"base_n_layer={self.base_n_layer}")
        if self.mixit_scale not in ('code', 'paper'):
            raise ValueError(f"mixit_scale must be 'code' or 'paper', got {self.mixit_scale!r}")
        if self.attn_out_proj and self.n_embd % self.n_head:
            raise ValueError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}: each head's value is "
                             f"n_embd // n_head wide (head_dim sets the query and key width only)")
        if self.n_embd % self.n_head and not self.head_dim:
            raise ValueError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}; set head_dim")
        if self.head_dim == 0:
            self.head_dim = self.n_embd // self.n_head
        if self.rope and self.head_dim % 2:
            raise ValueError(f"rotary embeddings need an even head_dim, got {self.head_dim}")

    @property
    def v_dim(self):
        """Value width per head: n_embd // n_head normally, n_embd when heads are summed without W_O."""
        return self.n_embd // self.n_head if self.attn_out_proj else self.n_embd


def make_norm(config):
    if config.norm == 'rms':
        return nn.RMSNorm(config.n_embd, eps=1e-6)
    if config.norm == 'layer':
        return nn.LayerNorm(config.n_embd, bias=config.bias)
    return nn.Identity()


def attention(Q, K, causal):
    """Row-wise softmax(Q K^T) with no 1/sqrt(d) scale (paper 2, eq. 1), optionally causal.
    Q, K: (..., n, d) -> (..., n, n); row i of a causal attention covers positions <= i."""
    S = Q @ K.transpose(-1, -2)
    if causal:
        n = S.shape[-1]
        S = S.masked_fill(torch.ones(n, n, dtype=torch.bool, device=S.device).triu(1), float('-inf'))
    return torch.softmax(S, dim=-1)


FUSED_HEAD_MULTIPLE = 8   # SDPA's fused GPU kernels (flash, memory-efficient, cuDNN) take 16-bit heads of widths
                          # that are multiples of this


def sdpa(q, k, v, causal, scale, multiple=None):
    """F.scaled_dot_product_attention: q, k (B, H, T, d), v (B, H, T, d_v) -> (B, H, T, d_v). On a GPU in 16
    bits, heads with d = d_v not a multiple of FUSED_HEAD_MULTIPLE (paper 1's random transformer: 128 heads of
    width 4) have no fused kernel, and SDPA's fallback writes the (B, H, T, T) scores in fp32; there q, k and v
    are zero-padded to the next multiple (the scores and the kept output columns unchanged) and the output cut
    back to d. `multiple` overrides when to pad (1: never), for tests on a CPU."""
    d = q.shape[-1]
    if multiple is None:
        half = q.is_cuda and q.dtype in (torch.float16, torch.bfloat16)
        multiple = FUSED_HEAD_MULTIPLE if half and v.shape[-1] == d else 1
    pad = -d % multiple
    if pad:
        q, k, v = (F.pad(t, (0, pad)) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    return y[..., :d] if pad else y


def rotary(x, cos, sin):
    """Rotary position embedding (Su et al. 2021), half-split as in Llama. x: (B, H, T, D); cos, sin: (T, D/2),
    applied in x's dtype (bf16 under autocast, as Llama's), so that q and k stay in the dtype attention takes."""
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def mixit_matrices(config, layer):
    """MixiT's static mixing matrices A for one layer (paper 1, eq. 2.3, as the authors' code builds them;
    docs/deviations.md#mixit-mixing-matrices).

    Causal (config.causal, the language and algorithmic tasks): A_h = tril(I + sigma_h (tril(M_h) - c_h)),
    M_h ~ N(0, 1) of size m x m, c_i = mean_{j<=i} M_ij, so every row sums to 1 and position i mixes only
    positions <= i. Non-causal (the authors' sentiment classifier, is_causal=False): A_h = I + sigma_h (M_h - c_h)
    with M_h dense and c_i = sum_j M_ij / (i + 1), the causal drift applied to dense rows: rows are not centred,
    and row i sums to 1 + sigma_h (1 - m / (i + 1)) sum_j M_ij (row 0's off-diagonal entries all have the sign
    of -sum_j M_0j). With config.mixit_sink_head, head 0 is a sink: 0.5 I with column 0 set to 0.5 in the
    authors' block (entry (0, 0) is 0.5, so row 0 sums to 0.5), 0.5 I + 0.5 e_1 in the plain block (every row
    sums to 1). With config.depth_alpha > 0 (the authors' depth-scaled block, whose residual stream carries the
    identity: Block) A_h = sigma_h (M_h - c_h) without I, sigma_h = 1/sqrt(m) in their code. Returns
    (n_head, m, m), float32, drawn from config.mixit_seed and the layer index so that the model is reproducible
    from its config alone.
    """
    m, H = config.block_size, config.n_head
    g = torch.Generator().manual_seed(config.mixit_seed * 100_003 + layer)
    M = torch.randn(H, m, m, generator=g)
    M = M.tril() if config.causal else M
    n_support = torch.arange(1, m + 1, dtype=torch.float32)
    c = M.sum(dim=-1, keepdim=True) / n_support[:, None]          # causal: the row mean over positions <= i
    if config.mixit_scale == 'paper':
        sigma = torch.full((H, 1, 1), 1 / math.sqrt(config.n_embd * m))
    elif config.depth_alpha > 0:  # authors' code, depth-scaled: 1/sqrt(m) for every head
        sigma = torch.full((H, 1, 1), 1 / math.sqrt(m))
    else:  # authors' code: sigma_h uniform between 1/sqrt(m n_h) and 1/sqrt(m)
        n_h = config.head_dim
        u = torch.rand(H, 1, 1, generator=g)
        sigma = 1 / math.sqrt(m * n_h) + u * (1 / math.sqrt(m) - 1 / math.sqrt(m * n_h))
    A = sigma * (M - c) if config.depth_alpha > 0 else torch.eye(m) + sigma * (M - c)
    A = A.tril() if config.causal else A
    if config.mixit_sink_head:
        A[0] = 0.5 * torch.eye(m)
        if config.mixit_block == 'code':
            A[0, :, 0] = 0.5
        else:
            A[0, :, 0] += 0.5
    return A


def width_scale(config, base):
    """sqrt(base / n_embd) in the authors' MixiT block (mixit_block='code'), else 1."""
    return math.sqrt(base / config.n_embd) if config.mixit_block == 'code' else 1.0


class Attention(nn.Module):

    def __init__(self, config, layer):
        super().__init__()
        self.n_head, self.head_dim, self.v_dim = config.n_head, config.head_dim, config.v_dim
        self.causal = config.causal
        self.mixit = config.attn == 'mixit'
        if self.mixit:  # no W_Q, W_K: the attention pattern is a fixed random matrix per head
            self.register_buffer('A', mixit_matrices(config, layer), persistent=False)
        else:
            self.c_q = nn.Linear(config.n_embd, config.n_head * config.head_dim, bias=config.bias)
            self.c_k = nn.Linear(config.n_embd, config.n_head * config.head_dim, bias=config.bias)
        self.c_v = nn.Linear(config.n_embd, config.n_head * self.v_dim, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias) if config.attn_out_proj else None
        self.scale = 1 / math.sqrt(config.head_dim) if config.score_scale else 1.0
        self.width_scale = width_scale(config, config.base_width)     # on the value and output projections

    def forward(self, x, rope):
        B, T, C = x.shape
        v = self.c_v(x) if self.width_scale == 1.0 else self.width_scale * self.c_v(x)
        if self.mixit:  # y[b] = A[:, :T, :T] @ v[b] for every sequence b, as one matmul over heads:
            # (H, T, T) @ (H, T, B*v_dim), so A is never copied per sequence
            v = v.view(B, T, self.n_head, self.v_dim).permute(2, 1, 0, 3).reshape(self.n_head, T, -1)
            y = (self.A[:, :T, :T].to(v.dtype) @ v).view(self.n_head, T, B, self.v_dim).permute(2, 0, 1, 3)
        else:
            v = v.view(B, T, self.n_head, self.v_dim).transpose(1, 2)                    # (B, H, T, v_dim)
            q, k = self.query_key(x, rope)
            y = sdpa(q, k, v, self.causal, self.scale)
        if self.c_proj is None:  # paper 2: heads write full-width values that are summed
            return y.sum(dim=1)
        out = self.c_proj(y.transpose(1, 2).reshape(B, T, C))
        return out if self.width_scale == 1.0 else self.width_scale * out

    def query_key(self, x, rope):
        """q, k: (B, H, T, d) each, rotated when rope is given."""
        B, T, _ = x.shape
        q = self.c_q(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.c_k(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        if rope is not None:
            q, k = rotary(q, *rope), rotary(k, *rope)
        return q, k

    def probs(self, x, rope):
        """The attention weights that forward applies to the values: (B, H, T, T), row t over positions <= t
        (every position when not causal). Softmax rows sum to 1; MixiT's rows are its static A (entries may be
        negative; see mixit_matrices for their sums)."""
        B, T, _ = x.shape
        if self.mixit:
            return self.A[:, :T, :T].expand(B, -1, -1, -1)
        q, k = self.query_key(x, rope)
        return attention(q * self.scale, k, causal=self.causal)


class MLP(nn.Module):
    """Gated MLP W_D(act(W_G h) * W_U h) with n_m = 4n (Llama): act = silu in the plain block; in the authors'
    MixiT block act = gain * LeakyReLU with negative slope 1 + activation_cminus / sqrt(n) (1 - 1/sqrt(n) by
    default), gain = calculate_gain('leaky_relu', slope), and the outputs of W_G, W_U times sqrt(base_width / n),
    of W_D times sqrt(1 / 4n) (Block)."""

    def __init__(self, config):
        super().__init__()
        self.c_gate = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.c_up = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.code = config.mixit_block == 'code'
        if self.code:
            self.slope = 1 + config.activation_cminus / math.sqrt(config.n_embd)
            self.gain = nn.init.calculate_gain('leaky_relu', self.slope)
            self.in_scale = width_scale(config, config.base_width)            # fan_in n, base base_width
            self.out_scale = width_scale(config, 1 / 4)                       # fan_in 4n, base 1

    def forward(self, x):
        if not self.code:
            return self.c_proj(F.silu(self.c_gate(x)) * self.c_up(x))
        g, u = self.in_scale * self.c_gate(x), self.in_scale * self.c_up(x)
        return self.out_scale * self.c_proj(self.gain * F.leaky_relu(g, self.slope) * u)


class Block(nn.Module):
    """Pre-norm residual block: h <- h + attn(norm(h)), h <- h + mlp(norm(h)) (paper 1, §2).

    mixit_block='code' is the block every MixiT number of paper 1 comes from (the authors' modeling_llama.py with
    shaped_attention='mixing'; docs/deviations.md#mixit-block): residual branches scaled,
    h <- s h + sqrt(1 - s^2) f(h) with s = skip_scaling; the outputs of the value, output, gate, up and head
    projections multiplied by sqrt(base_width / fan_in), of the down projection by sqrt(1 / 4n); the MLP's
    activation a scaled LeakyReLU (MLP); every linear N(0, 0.02) (GPT._init_weights).

    depth_alpha > 0 is the authors' depth-scaled residual, their Slurm language-model runner's (depth_alpha 1,
    base_n_layer 4, in any block): h <- h + (base_n_layer / n_layer)^depth_alpha f(h), the skip unscaled and
    MixiT's mixing without its identity (mixit_matrices); docs/deviations.md#mixit-block."""

    def __init__(self, config, layer):
        super().__init__()
        self.residual = config.residual
        self.ln_1, self.attn = make_norm(config), Attention(config, layer)
        if config.mlp:
            self.ln_2, self.mlp = make_norm(config), MLP(config)
        else:
            self.mlp = None
        if config.depth_alpha > 0:
            self.skip, self.branch = 1.0, (config.base_n_layer / config.n_layer) ** config.depth_alpha
        else:
            s = config.skip_scaling if config.mixit_block == 'code' else 1.0
            self.skip, self.branch = s, math.sqrt(1 - s * s) if s < 1 else 1.0

    def add(self, x, f):
        if not self.residual:
            return f
        if self.skip == 1.0:
            return x + f if self.branch == 1.0 else x + self.branch * f
        return self.skip * x + self.branch * f

    def forward(self, x, rope):
        x = self.add(x, self.attn(self.ln_1(x), rope))
        if self.mlp is not None:
            x = self.add(x, self.mlp(self.ln_2(x)))
        return x


LOSS_CHUNK = 2 ** 24     # logits per chunk of ChunkedHeadLoss on a CPU (64 MB in fp32): 333 tokens at 50,304
LOSS_CHUNK_GPU = 2 ** 28  # on a GPU (1 GiB in fp32): 5,336 tokens, a few chunks per micro-batch, not hundreds


def loss_chunk_rows(vocab_size, device_type='cpu'):
    """Rows (tokens) per chunk of ChunkedHeadLoss for a head of vocab_size outputs on device_type: LOSS_CHUNK
    logits on a CPU (cache-sized), LOSS_CHUNK_GPU elsewhere (each chunk costs a few hundred kernel launches),
    at least one row."""
    return max(1, (LOSS_CHUNK if device_type == 'cpu' else LOSS_CHUNK_GPU) // vocab_size)


WIDEN_ROWS = 2048               # rows per block of add_widened: 4 MB of fp32 at n_embd 512


def add_widened(acc, x, buf):
    """acc += x, where x is narrower than acc (a bf16 gradient into an fp32 sum), a block of buf.shape[0] rows at
    a time through buf, a (rows, acc.shape[1]) buffer of acc's dtype. Adding mixed dtypes directly takes a
    slower, casting path on a CPU; widening all of x first needs a copy of acc's size."""
    for i in range(0, x.shape[0], buf.shape[0]):
        block = x[i:i + buf.shape[0]]
        acc[i:i + len(block)] += buf[:len(block)].copy_(block)


def softmax_xent_grad(z, t, scored, inv_denom, n_valid, dtype, out_dtype):
    """One chunk of ChunkedHeadLoss after its logits matmul: z (k, V) logits; t (k,) target ids >= 0; scored
    (k,) bool; inv_denom: 1 / the scored rows of the whole batch (0-dim tensor); the columns from n_valid on are
    -inf. Computed in dtype. Returns (the summed cross-entropy of the scored rows in nats, 0-dim dtype;
    d loss / d z = inv_denom * scored * (softmax(z) - one_hot(t)), (k, V) in out_dtype). Compiled
    (softmax_xent_grad_fused), it is one reduction and one pointwise pass over z instead of ChunkedHeadLoss's
    six eager ones."""
    z = z.to(dtype)
    cols = torch.arange(z.shape[1], device=z.device)
    if n_valid < z.shape[1]:
        z = z.masked_fill(cols >= n_valid, float('-inf'))
    lse = torch.logsumexp(z, dim=-1, keepdim=True)
    loss = ((lse.squeeze(1) - z.gather(1, t[:, None]).squeeze(1)) * scored).sum()
    g = (torch.exp(z - lse) - (cols == t[:, None]).to(dtype)) * (scored * inv_denom)[:, None]
    return loss, g.to(out_dtype)


softmax_xent_grad_fused = torch.compile(softmax_xent_grad, dynamic=False)     # compiled at its first call


class ChunkedHeadLoss(torch.autograd.Function):
    """Mean cross-entropy of the logits scale * x W^T against targets, a chunk of rows at a time, with the
    gradients of x and W formed in the same pass: no (N, vocab_size) logits tensor outlives its chunk, and
    nothing is recomputed. x: (N, C); W: (V, C); targets: (N,) ids, -1 where not scored; chunk: rows per
    chunk; n_valid: the logits from column n_valid on are -inf (W's rows padded for alignment), so that they
    take no probability and get no gradient. On a CPU, when the rows span more than one chunk, rows without a
    target are dropped before the head: a classification batch with one label per text then costs one row per
    text, not one per token (on a GPU finding them would sync host and device every micro-batch, and its chunks
    are large enough that only a language model's head, where every row is scored, spans several).
    Under autocast the matmuls run in its dtype with W cast once (float16: the gradient matmuls in fp32, so
    that gradients below float16's range survive until a GradScaler scales them), the log-softmax, the loss
    and W's gradient in fp32; the chunks share their buffers, so that their pages are faulted in once per step.
    fused: each chunk's softmax and gradient by softmax_xent_grad_fused (compiled: two passes over the logits,
    for a GPU, where the eager passes cost more than the matmuls), else eagerly in place through the buffers.
    Returns the loss in nats per scored row (0 when none is scored). The gradients are handed to the first
    backward, scaled in place; a second backward through the same loss raises RuntimeError."""

    @staticmethod
    def forward(ctx, x, weight, targets, scale, chunk, n_valid, fused=False):
        scored_all = targets >= 0
        rows = None
        if x.shape[0] > chunk and x.device.type == 'cpu':
            rows = scored_all.nonzero().squeeze(1)
            rows = None if len(rows) == x.shape[0] else rows
        xs, ts = (x, targets) if rows is None else (x[rows], targets[rows])
        device = x.device.type      # autocast is turned off inside: it would cast W again for every chunk
        mm = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else x.dtype
        dtype = torch.promote_types(mm, torch.float32)                  # log-softmax, loss, W's gradient
        denom = scored_all.sum().clamp(min=1).to(dtype)
        loss = torch.zeros((), dtype=dtype, device=x.device)
        grad_x = torch.empty_like(xs) if ctx.needs_input_grad[0] else None
        grad_w = torch.zeros_like(weight, dtype=dtype) if ctx.needs_input_grad[1] else None
        with torch.autocast(device, enabled=False):
            scaled = weight if scale == 1.0 else scale * weight
            w, xs_mm = scaled.to(mm), xs.to(mm)                             # logits = x w^T
            # the gradient matmuls run in mm too, except in float16: d loss / d logits is of order
            # 1 / (vocab_size * scored rows), below float16's range, and formed here, before a GradScaler's scale
            back = dtype if mm == torch.float16 else mm
            w_back, xs_back = (w, xs_mm) if back == mm else (scaled.to(back), xs.to(back))
            rows_per, V = min(chunk, xs.shape[0]), weight.shape[0]
            z_buf = x.new_empty(rows_per, V, dtype=mm)
            widen = mm != dtype         # logits below the softmax's dtype: widen them
            narrow = back != dtype      # gradient matmuls below it too: narrow g, widen W's gradient
            # (through these buffers: log_softmax(dtype=) and a mixed-dtype out= make a temporary per chunk)
            g_buf = None if fused else x.new_empty(rows_per, V, dtype=dtype)
            f_buf = torch.empty_like(g_buf) if widen and not fused else None    # the logits widened to dtype
            gw_mm = torch.empty_like(w) if narrow and grad_w is not None else None    # a chunk's W gradient
            widen_gw = gw_mm is not None and device == 'cpu'     # a GPU adds mixed dtypes in one kernel
            gw = grad_w.new_empty(WIDEN_ROWS, grad_w.shape[1]) if widen_gw else None   # widens gw_mm's rows
            for i in range(0, xs.shape[0], chunk):
                xc, t = xs_mm[i:i + chunk], ts[i:i + chunk]
                k, scored, t = len(xc), t >= 0, t.clamp(min=0)
                z = torch.mm(xc, w.t(), out=z_buf[:k])
                if fused:
                    part, g = softmax_xent_grad_fused(z, t, scored, 1 / denom, n_valid, dtype, back)
                    loss += part
                else:
                    z = f_buf[:k].copy_(z) if widen else z
                    if n_valid < V:
                        z[:, n_valid:] = float('-inf')
                    g = torch.log_softmax(z, dim=-1, out=g_buf[:k])
                    loss -= (g.gather(1, t[:, None]).squeeze(1) * scored).sum()
                    g.exp_().scatter_add_(1, t[:, None], -torch.ones_like(g[:, :1]))   # softmax - one-hot
                    g *= (scored / denom)[:, None]                                       # d loss / d logits
                    g = z_buf[:k].copy_(g) if narrow else g                              # back in mm
                if grad_x is not None:
                    grad_x[i:i + chunk] = g @ w_back
                if widen_gw:
                    add_widened(grad_w, torch.mm(g.t(), xc, out=gw_mm), gw)
                elif gw_mm is not None:
                    grad_w += torch.mm(g.t(), xc, out=gw_mm)
                elif grad_w is not None:
                    torch.addmm(grad_w, g.t(), xs_back[i:i + chunk], out=grad_w)
        if grad_w is not None and scale != 1.0:
            grad_w *= scale
        if grad_x is not None and rows is not None:
            grad_x = torch.zeros_like(x).index_copy_(0, rows, grad_x)
        ctx.grads = grad_x, grad_w      # made here, not inputs or outputs: kept on ctx, handed over once
        ctx.weight_dtype = weight.dtype
        return loss / denom

    @staticmethod
    def backward(ctx, grad_loss):
        if ctx.grads is None:
            raise RuntimeError("ChunkedHeadLoss: a second backward through the same loss (its gradients are "
                               "formed in the forward and scaled in place by the first)")
        (grad_x, grad_w), ctx.grads = ctx.grads, None     # no copy: the optimizer's .grad can take grad_w itself
        return (None if grad_x is None else grad_x.mul_(grad_loss),
                None if grad_w is None else grad_w.mul_(grad_loss).to(ctx.weight_dtype), None, None, None, None, None)


@torch.compiler.disable     # eager inside a compiled model too: inductor's version of the chunk loop runs slower
def chunked_head_loss(x, weight, targets, scale, chunk, n_valid=None, fused=False):
    """ChunkedHeadLoss.apply (same arguments; n_valid None: every row of weight), never compiled as a whole."""
    return ChunkedHeadLoss.apply(x, weight, targets, scale, chunk, weight.shape[0] if n_valid is None else n_valid,
                                 fused)


class GPT(nn.Module):
    fused_loss = False      # training loss: ChunkedHeadLoss's softmax step compiled (train.py: on a GPU with compile)

    def __init__(self, config):
        super().__init__()
        self.config = config
        n_blocks = 1 if config.looped else config.n_layer
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd,
                             padding_idx=config.pad_id if config.pad_id >= 0 else None),
            wpe=nn.Embedding(config.block_size, config.n_embd) if config.pos_emb else None,
            h=nn.ModuleList([Block(config, layer) for layer in range(n_blocks)]),
            ln_f=make_norm(config),
        ))
        # the output layer: next-token logits (rows padded to vocab_multiple), or with n_class a sequence
        # classifier's (the authors' `score`)
        self.n_out = config.n_class or config.vocab_size              # the logits forward returns
        rows = config.n_class or -(-config.vocab_size // config.vocab_multiple) * config.vocab_multiple
        self.lm_head = nn.Linear(config.n_embd, rows, bias=False)
        self.head_scale = width_scale(config, config.base_width)
        if config.rope:
            inv_freq = 1.0 / (10000 ** (torch.arange(0, config.head_dim, 2).float() / config.head_dim))
            angles = torch.outer(torch.arange(config.block_size).float(), inv_freq)    # (block_size, d/2)
            self.register_buffer('rope_cos', angles.cos(), persistent=False)
            self.register_buffer('rope_sin', angles.sin(), persistent=False)
        self._init_weights()
        self._freeze()

    def _init_weights(self):
        """N(0, 0.02) for every matrix, N(0, 0.02/sqrt(2L)) for the output projections (GPT-2's
        convention, docs/deviations.md#initialisation) except in the authors' MixiT block, where they are
        N(0, 0.02) too; with init='uniform' the blocks keep PyTorch's Linear default
        U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (paper 2). W_Q and W_K take N(0, qk_init_std) instead (0.02 unless
        a config says otherwise). The padding token's embedding (pad_id) is zero."""
        c = self.config
        for name, p in self.named_parameters():
            if name.endswith('bias'):
                nn.init.zeros_(p)
            elif p.dim() == 2 and (c.init == 'normal' or not name.startswith('transformer.h.')):
                std = 0.02
                if name.endswith('c_proj.weight') and c.mixit_block == 'plain':
                    std = 0.02 / math.sqrt(2 * c.n_layer)
                elif name.endswith(('c_q.weight', 'c_k.weight')):
                    std = c.qk_init_std
                nn.init.normal_(p, mean=0.0, std=std)
        if c.pad_id >= 0:                   # padding_idx: zero, and nn.Embedding never updates it
            with torch.no_grad():
                self.transformer.wte.weight[c.pad_id].zero_()

    def _freeze(self):
        c = self.config
        for block in self.transformer.h:
            frozen = []
            if c.freeze_attn:
                frozen.append(block.attn)
            elif c.freeze_qk and c.attn == 'softmax':
                frozen += [block.attn.c_q, block.attn.c_k]
            if c.freeze_mlp and block.mlp is not None:
                frozen.append(block.mlp)
            if c.freeze_norm:
                frozen.append(block.ln_1)
                frozen += [block.ln_2] if block.mlp is not None else []
            for module in frozen:
                module.requires_grad_(False)
        if c.freeze_norm:
            self.transformer.ln_f.requires_grad_(False)

    def num_params(self):
        """(trainable, total) parameter counts; buffers (MixiT's mixing, rotary tables) are not parameters."""
        params = list(self.parameters())
        return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params)

    def embed(self, idx):
        """The residual stream's input (B, T, n_embd) for token ids idx (B, T), and the rotary tables for T."""
        T = idx.shape[1]
        if T > self.config.block_size:
            raise ValueError(f"sequence length {T} exceeds block_size {self.config.block_size}")
        x = self.transformer.wte(idx)
        if self.transformer.wpe is not None:
            x = x + self.transformer.wpe(torch.arange(T, device=idx.device))
        rope = (self.rope_cos[:T], self.rope_sin[:T]) if self.config.rope else None
        return x, rope

    def blocks(self):
        """The n_layer blocks in order (one block repeated when looped)."""
        return [self.transformer.h[0 if self.config.looped else layer] for layer in range(self.config.n_layer)]

    @torch.no_grad()
    def attention_probs(self, idx):
        """Every layer's attention weights for token ids idx (B, T): a list of n_layer tensors (B, H, T, T),
        entry [b, h, t, s] = how much position t takes from position s <= t (see Attention.probs)."""
        x, rope = self.embed(idx)
        probs = []
        for block in self.blocks():
            probs.append(block.attn.probs(block.ln_1(x), rope))
            x = block(x, rope)
        return probs

    def forward(self, idx, targets=None, scored_only=False):
        """idx: (B, T) token ids, T <= block_size; targets: (B, T) ids with -1 at positions that are not
        scored. Returns (logits, loss): loss is the mean cross-entropy in nats over scored positions (None
        without targets); logits are (B, 1, V) for the last position without targets, (B, T, V) with targets,
        except in training mode with gradients enabled: there logits is None, the loss comes from
        ChunkedHeadLoss, and no (B, T, V) tensor is made. scored_only (with targets, outside training):
        logits (n_scored, V) at the positions where targets >= 0 only, in row-major order, so that a task
        scoring one position per text evaluates the output layer once per text."""
        x, rope = self.embed(idx)
        for block in self.blocks():
            x = block(x, rope)
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.head(x[:, [-1], :]), None
        if self.training and torch.is_grad_enabled():   # the loss for backward without a (B, T, V) logits tensor
            loss = chunked_head_loss(x.flatten(0, 1), self.lm_head.weight, targets.reshape(-1), self.head_scale,
                                     loss_chunk_rows(self.lm_head.out_features, x.device.type), self.n_out,
                                     self.fused_loss)
            return None, loss
        if scored_only:
            return self.scored_head(x, targets)
        logits = self.head(x)
        return logits, self.cross_entropy(logits, targets)

    # the number of scored rows depends on the data: eager, so that a compiled model's graph keeps static shapes
    # and is not recompiled for each count
    @torch.compiler.disable
    def scored_head(self, x, targets):
        """(logits, loss) of forward's scored_only: the head on x (B, T, n_embd) only where targets (B, T) >= 0,
        logits (n_scored, V) in row-major order."""
        scored = targets >= 0
        logits = self.head(x[scored])
        return logits, self.cross_entropy(logits, targets[scored])

    @staticmethod
    def cross_entropy(logits, targets):
        """Mean cross-entropy (nats) of logits (..., V) against targets (...), -1 ignored (nan when none is);
        in fp32 (fp64 for fp64 logits), loss_chunk_rows rows at a time, so that the widened copy is a chunk's,
        not the logits' (a language model's evaluation batch of 16 x 2,048 tokens: 1 GB, not 6.6 GB)."""
        logits, targets = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
        dtype = torch.float64 if logits.dtype == torch.float64 else torch.float32
        rows = loss_chunk_rows(logits.shape[-1], logits.device.type)
        total = sum(F.cross_entropy(logits[i:i + rows].to(dtype), targets[i:i + rows], ignore_index=-1,
                                    reduction='sum') for i in range(0, len(logits), rows))
        return total / (targets >= 0).sum()

    def mixing_in(self, dtype):
        """Keep MixiT's static mixing matrices A in dtype (autocast's, for training), so that no forward casts
        them again: the same products as casting them in every forward. Returns self."""
        for block in self.transformer.h:
            if block.attn.mixit:
                block.attn.A = block.attn.A.to(dtype)
        return self

    def head(self, x):
        """Logits (..., vocab_size), or (..., n_class), from the final hidden states x (..., n_embd): the
        padded rows of the output layer (vocab_multiple) left out."""
        logits = self.lm_head(x) if self.head_scale == 1.0 else self.head_scale * self.lm_head(x)
        return logits if self.lm_head.out_features == self.n_out else logits[..., :self.n_out]

    def flops_per_token(self, T, scored=1.0):
        """Model FLOPs of one training step (forward + backward) per token at sequence length T: matmuls only,
        nothing recomputed; for MFU multiply by tokens/s (FLOP/s). The output layer counts at the share `scored`
        of tokens that have a target (ChunkedHeadLoss skips the others; 1 for language modeling).
        A linear in -> out costs 2*in*out forward, 2*in*out for its input gradient (every variant trains wte, so
        input gradients are always needed) and 2*in*out for its weight gradient only when the weight is
        trainable. Attention is counted as the work it needs: causal, the token at position t (1-based)
        attends to t positions, (T+1)/2 on average; non-causal, to all T. Softmax: S = q k^T, y = P v forward;
        dP, dv, dq, dk backward. MixiT: y = A v forward, dv = A^T dy backward (A is a fixed buffer: no dA, no q,
        k or scores). Embeddings, norms, activations, rotary, loss, optimizer: not counted."""
        def linear(m):
            return 2 * m.in_features * m.out_features * (3 if m.weight.requires_grad else 2)

        Tc = (T + 1) / 2 if self.config.causal else T
        flops = 0.0
        for block in self.transformer.h:
            a = block.attn
            flops += linear(a.c_v) + (linear(a.c_proj) if a.c_proj is not None else 0)
            if a.mixit:
                flops += 2 * 2 * Tc * a.n_head * a.v_dim
            else:
                flops += linear(a.c_q) + linear(a.c_k) + 3 * 2 * Tc * a.n_head * (a.head_dim + a.v_dim)
            if block.mlp is not None:
                flops += sum(linear(m) for m in (block.mlp.c_gate, block.mlp.c_up, block.mlp.c_proj))
        flops *= self.config.n_layer if self.config.looped else 1     # looped: one block applied n_layer times
        return flops + scored * linear(self.lm_head)

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        """AdamW over trainable parameters only; weight decay on the >= 2-D ones (matrices, embeddings)."""
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {'params': [p for p in params if p.dim() >= 2], 'weight_decay': weight_decay},
            {'params': [p for p in params if p.dim() < 2], 'weight_decay': 0.0},
        ]
        fused = device_type in ('cuda', 'cpu')   # one kernel over all tensors: ~4x faster than foreach on a CPU
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, fused=fused)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Sample max_new_tokens continuations of idx (B, T). Models with rotary or no position information
        see the last block_size tokens; MixiT and learned-position models cannot go past block_size and
        raise ValueError instead of silently cropping."""
        if self.config.pos_emb and idx.size(1) + max_new_tokens > self.config.block_size:
            raise ValueError(f"prompt ({idx.size(1)}) + max_new_tokens ({max_new_tokens}) exceeds this model's "
                             f"context of {self.config.block_size} tokens (learned positions / MixiT mixing)")
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.config.block_size:])
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('inf')
            idx = torch.cat((idx, torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)), dim=1)
        return idx
