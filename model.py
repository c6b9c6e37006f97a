"""
One decoder-only transformer and every variant the three papers study, each a few flags on the same model: a
Llama-style block (paper 1, §2: RMSNorm, causal attention with rotary embeddings, gated MLP), the variants rows of
VARIANTS (paper 1, Table 1; paper 2, §2). Frozen weights have requires_grad=False and never enter the optimizer;
MixiT's matrices are buffers. This file imports torch only: copy it alone into another project.
"""

import math
from dataclasses import dataclass, field, fields, is_dataclass, replace

import torch
import torch.nn as nn
import torch.nn.functional as F

# The base block's flags, and each variant's changes to them: the one place that defines a variant.
BASE = dict(attn='softmax', rope=True, pos_emb=False, score_scale=True, attn_out_proj=True, mlp=True, residual=True,
            norm='rms', init='normal', mixit_block='base', freeze_qk=False, freeze_mlp=False, freeze_attn=False,
            freeze_norm=False)
FROZEN = dict(freeze_attn=True, freeze_mlp=True, freeze_norm=True)     # every block weight fixed at init
VARIANTS = {
    'standard':   dict(),                                              # everything trained
    'frozen_qk':  dict(freeze_qk=True),                                # W_Q, W_K of every layer fixed at init
    'frozen_mlp': dict(freeze_mlp=True),                               # W_G, W_U, W_D of every layer fixed at init
    'mixit':      dict(attn='mixit', rope=False, pos_emb=True, mixit_block='authors'),   # fixed random mixing
                                                                       # A, eq. 2.3, in the authors' block (Block)
    'random':     dict(rope=False, pos_emb=True, **FROZEN),            # only embeddings and head trained
    'universal':  dict(rope=False, score_scale=False, attn_out_proj=False, mlp=False, residual=False,
                       norm='none', init='uniform', **FROZEN),         # paper 2, §2: only E (wte), U (lm_head)
}
CHOICES = dict(attn=('softmax', 'mixit'), norm=('rms', 'layer', 'none'), init=('normal', 'uniform'),
               mixit_block=('authors', 'base'), mixit_scale=('authors', 'paper'))
RENAMED = dict(mixit_block={'code': 'authors', 'plain': 'base'}, mixit_scale={'code': 'authors'})   # older names


@dataclass
class AuthorsMixit:
    """MixiT as the authors' code (princeton-pli/MixiT) draws its matrices and trains it, which produced paper 1's
    MixiT numbers (docs/deviations.md#mixit-block): read by mixit_matrices, width_scale, MLP and Block only. On a
    command line and in a checkpoint's model_args each field is a key of its own (--depth_alpha=1): from_keys."""
    mixit_seed: int = 0                  # MixiT's matrices are drawn again from this seed, never checkpointed
    mixit_scale: str = 'authors'         # sigma_h of A: 'authors' as their code draws it; 'paper': 1/sqrt(n m)
    mixit_sink_head: bool = True         # head 0 of every layer attends to itself and token 1
    mixit_block: str | None = None       # 'authors': their block (Block, MLP); 'base': the Llama block; None: variant's
    skip_scaling: float = 0.5 ** 0.5     # their block: h <- s h + sqrt(1 - s^2) f(h)
    activation_cminus: float = -1.0      # their block: MLP LeakyReLU slope 1 + activation_cminus / sqrt(n)
    base_width: int = 512                # their block: linear outputs times sqrt(base_width / fan_in)
    depth_alpha: float = 0.0             # > 0: h <- h + (base_n_layer / n_layer)^depth_alpha f(h), A without I
    base_n_layer: int = 4                # the depth at which depth_alpha's branch scale is 1


@dataclass
class GPTConfig:
    block_size: int = 256        # maximum sequence length (MixiT's m)
    vocab_size: int = 50304      # token ids (the task fixes it)
    n_layer: int = 12            # blocks
    n_head: int = 8              # attention heads per block
    n_embd: int = 512            # the residual stream's width
    bias: bool = False           # biases in attention and MLP linears (paper 1's parameter counts need True)
    causal: bool = True          # False: every position attends to (MixiT: mixes) all block_size positions
    n_class: int = 0             # > 0: the head has n_class outputs (sequence classification), not vocab_size
    pad_id: int = -1             # >= 0: this token's embedding is zero and never trained (padding)
    vocab_multiple: int = 1      # output rows rounded up to a multiple of this (64: 50,257 -> 50,304), never used
    variant: str = 'standard'    # a row of VARIANTS: sets the flags below that are left at None
    # attention
    attn: str | None = None              # 'softmax' | 'mixit'
    rope: bool | None = None             # rotary embeddings on q and k
    pos_emb: bool | None = None          # learned absolute position embedding added to the token embedding
    head_dim: int = 0                    # q/k width per head (paper 2's d); 0 = n_embd // n_head
    score_scale: bool | None = None      # divide scores by sqrt(head_dim)
    attn_out_proj: bool | None = None    # False: each head's value is n_embd wide, heads summed, no W_O (paper 2)
    qk_init_std: float = 0.02            # std of W_Q, W_K (docs/deviations.md#frozen-qk-score-scale)
    # block
    mlp: bool | None = None
    residual: bool | None = None
    norm: str | None = None              # 'rms' | 'layer' | 'none'
    looped: bool = False                 # one block's weights reused by all n_layer layers
    init: str | None = None              # 'normal' (N(0, 0.02)) | 'uniform' (PyTorch Linear default) for blocks
    # what is frozen at init
    freeze_qk: bool | None = None
    freeze_mlp: bool | None = None
    freeze_attn: bool | None = None      # every attention weight (q, k, v, out)
    freeze_norm: bool | None = None
    authors: AuthorsMixit = field(default_factory=AuthorsMixit)   # MixiT's matrices and block, as the authors' code

    def __post_init__(self):
        if self.n_class < 0 or self.pad_id >= self.vocab_size or self.vocab_multiple < 1:
            raise ValueError(f"need n_class >= 0, pad_id < vocab_size={self.vocab_size} and vocab_multiple >= 1, "
                             f"got n_class={self.n_class}, pad_id={self.pad_id}, vocab_multiple={self.vocab_multiple}")
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; choose from {', '.join(VARIANTS)}")
        self.authors = a = replace(self.authors)                          # filled in below: this config's own
        for name, value in {**BASE, **VARIANTS[self.variant]}.items():   # a flag left at None: the variant's
            if self.key(name) is None:
                setattr(self.holder(name), name, value)
        bad = [f"{name} must be {', '.join(map(repr, allowed[:-1]))} or {allowed[-1]!r}, got {self.key(name)!r}"
               for name, allowed in CHOICES.items() if self.key(name) not in allowed]
        indivisible = f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}"
        for wrong, message in [
                (not self.qk_init_std > 0, f"qk_init_std must be positive, got {self.qk_init_std}"),
                (not 0 < a.skip_scaling <= 1, f"skip_scaling must be in (0, 1], got {a.skip_scaling}"),
                (not 0 <= a.depth_alpha <= 16 or a.base_n_layer < 1 or a.base_width < 1,
                 f"need depth_alpha in [0, 16], base_n_layer >= 1 and base_width >= 1, got depth_alpha="
                 f"{a.depth_alpha}, base_n_layer={a.base_n_layer}, base_width={a.base_width}"),
                (self.attn_out_proj and self.n_embd % self.n_head, f"{indivisible}: each head's value is n_embd // "
                 f"n_head wide (head_dim sets the query and key width only)"),
                (self.n_embd % self.n_head and not self.head_dim, f"{indivisible}; set head_dim"),
                (self.rope and (self.head_dim or self.n_embd // self.n_head) % 2,
                 f"rotary embeddings need an even head_dim, got {self.head_dim or self.n_embd // self.n_head}")]:
            if wrong:
                bad.append(message)
        if bad:
            raise ValueError(bad[0])
        self.head_dim = self.head_dim or self.n_embd // self.n_head

    @classmethod
    def from_keys(cls, **keys):
        """The GPTConfig of flat keys, as a command line, a config file and a checkpoint's model_args hold them:
        AuthorsMixit's fields are keys of their own (GPTConfig.from_keys(variant='mixit', depth_alpha=1.0)), and
        their values' older names (RENAMED) still read. Raises TypeError for a key that names no field, ValueError
        for a value out of range."""
        group = {f.name: keys.pop(f.name) for f in fields(AuthorsMixit) if f.name in keys}
        group = {k: RENAMED[k].get(v, v) if k in RENAMED and isinstance(v, str) else v for k, v in group.items()}
        return cls(**keys, authors=AuthorsMixit(**group))

    def holder(self, key):
        """The dataclass that holds a flat key (from_keys's): this config, or its `authors` group."""
        return self.authors if hasattr(self.authors, key) else self

    def key(self, key):
        """The value of a flat key: config.key('mixit_block') is config.authors.mixit_block."""
        return getattr(self.holder(key), key)

    def to_keys(self):
        """This config as flat keys, what a checkpoint's model_args holds: GPTConfig.from_keys(**c.to_keys()) == c."""
        return {f.name: self.key(f.name) for f in self.key_fields()}

    @classmethod
    def key_fields(cls):
        """Every key from_keys takes, as dataclasses.Field objects (name, type, default): GPTConfig's fields with
        AuthorsMixit's in the place of `authors`."""
        return [g for f in fields(cls) for g in (fields(f.type) if is_dataclass(f.type) else [f])]

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


def softmax_attention(Q, K, causal):
    """Row-wise softmax(Q K^T) with no 1/sqrt(d) scale (paper 2, eq. 1), optionally causal.
    Q, K: (..., n, d) -> (..., n, n); row i of a causal attention covers positions <= i."""
    S = Q @ K.transpose(-1, -2)
    if causal:
        S = S.masked_fill(torch.ones(S.shape[-2:], dtype=torch.bool, device=S.device).triu(1), float('-inf'))
    return torch.softmax(S, dim=-1)


def sdpa(q, k, v, causal, scale, multiple=None):
    """F.scaled_dot_product_attention: q, k (B, H, T, d), v (B, H, T, d_v) -> (B, H, T, d_v). On a GPU in 16
    bits, heads of a width d = d_v that SDPA's fused kernels lack (the random transformer's 128 heads of width 4)
    are zero-padded to a multiple of 8 and cut back: the same output, without fp32 scores. multiple=1: never pad."""
    d = q.shape[-1]
    if multiple is None:
        multiple = 8 if q.is_cuda and q.dtype in (torch.float16, torch.bfloat16) and v.shape[-1] == d else 1
    pad = -d % multiple
    q, k, v = (F.pad(t, (0, pad)) for t in (q, k, v)) if pad else (q, k, v)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    return y[..., :d] if pad else y


def rotary(x, cos, sin):
    """Rotary position embedding (Su et al. 2021), half-split as in Llama. x: (B, H, T, D); cos, sin: (T, D/2),
    applied in x's dtype (bf16 under autocast, as Llama's), so that q and k stay in the dtype attention takes."""
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def mixit_matrices(config, layer):
    """MixiT's static mixing matrices A (n_head, m, m), float32, of one layer (paper 1, eq. 2.3, as the
    authors' code builds them; docs/deviations.md#mixit-mixing-matrices), drawn from config.authors.mixit_seed and the
    layer index. Causal: A_h = tril(I + sigma_h (tril(M_h) - c_h)), M_h ~ N(0, 1), c_i = mean_{j<=i} M_ij, so
    every row sums to 1. Non-causal (the authors' sentiment classifier): A_h = I + sigma_h (M_h - c_h), M_h dense,
    c_i = sum_j M_ij / (i + 1) (rows not centred). mixit_sink_head: head 0 is 0.5 I with column 0 set to 0.5 in
    the authors' block (row 0 sums to 0.5), 0.5 I + 0.5 e_1 in the base one. depth_alpha > 0 (the residual
    carries the identity): A_h = sigma_h (M_h - c_h), sigma_h = 1/sqrt(m)."""
    m, H, a = config.block_size, config.n_head, config.authors
    g = torch.Generator().manual_seed(a.mixit_seed * 100_003 + layer)
    M = torch.randn(H, m, m, generator=g)
    M = M.tril() if config.causal else M
    c = M.sum(dim=-1, keepdim=True) / torch.arange(1, m + 1, dtype=torch.float32)[:, None]   # mean over j <= i
    if a.mixit_scale == 'paper':
        sigma = torch.full((H, 1, 1), 1 / math.sqrt(config.n_embd * m))
    elif a.depth_alpha > 0:  # authors' code, depth-scaled: 1/sqrt(m) for every head
        sigma = torch.full((H, 1, 1), 1 / math.sqrt(m))
    else:  # authors' code: sigma_h uniform between 1/sqrt(m n_h) and 1/sqrt(m)
        lo, u = 1 / math.sqrt(m * config.head_dim), torch.rand(H, 1, 1, generator=g)
        sigma = lo + u * (1 / math.sqrt(m) - lo)
    A = sigma * (M - c) if a.depth_alpha > 0 else torch.eye(m) + sigma * (M - c)
    A = A.tril() if config.causal else A
    if a.mixit_sink_head:              # the authors' block: column 0 is 0.5; the base one adds 0.5 e_1 to 0.5 I
        A[0] = 0.5 * torch.eye(m)
        A[0, :, 0] = 0.5 + (A[0, :, 0] if a.mixit_block == 'base' else 0)
    return A


def width_scale(config, base):
    """sqrt(base / n_embd) in the authors' MixiT block (mixit_block='authors'), else 1."""
    return math.sqrt(base / config.n_embd) if config.authors.mixit_block == 'authors' else 1.0


class Attention(nn.Module):

    def __init__(self, config, layer):
        super().__init__()
        self.n_head, self.head_dim, self.v_dim = config.n_head, config.head_dim, config.v_dim
        self.causal, self.mixit = config.causal, config.attn == 'mixit'
        if self.mixit:  # no W_Q, W_K: the attention pattern is a fixed random matrix per head
            self.register_buffer('A', mixit_matrices(config, layer), persistent=False)
        else:
            self.c_q = nn.Linear(config.n_embd, config.n_head * config.head_dim, bias=config.bias)
            self.c_k = nn.Linear(config.n_embd, config.n_head * config.head_dim, bias=config.bias)
        self.c_v = nn.Linear(config.n_embd, config.n_head * self.v_dim, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias) if config.attn_out_proj else None
        self.scale = 1 / math.sqrt(config.head_dim) if config.score_scale else 1.0
        self.width_scale = width_scale(config, config.authors.base_width)   # on the value and output projections

    def forward(self, x, rotation):
        B, T, C = x.shape
        v = self.c_v(x) if self.width_scale == 1.0 else self.width_scale * self.c_v(x)
        if self.mixit:  # y[b] = A[:, :T, :T] @ v[b] for every b as one matmul, (H, T, T) @ (H, T, B*v_dim)
            v = v.view(B, T, self.n_head, self.v_dim).permute(2, 1, 0, 3).reshape(self.n_head, T, -1)
            y = (self.A[:, :T, :T].to(v.dtype) @ v).view(self.n_head, T, B, self.v_dim).permute(2, 0, 1, 3)
        else:
            v = v.view(B, T, self.n_head, self.v_dim).transpose(1, 2)                    # (B, H, T, v_dim)
            q, k = self.query_key(x, rotation)
            y = sdpa(q, k, v, self.causal, self.scale)
        if self.c_proj is None:  # paper 2: heads write full-width values that are summed
            return y.sum(dim=1)
        out = self.c_proj(y.transpose(1, 2).reshape(B, T, C))
        return out if self.width_scale == 1.0 else self.width_scale * out

    def query_key(self, x, rotation):
        """q, k: (B, H, T, d) each, rotated when rotation, rotary embeddings' (cos, sin), is given."""
        B, T, _ = x.shape
        q = self.c_q(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.c_k(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        if rotation is not None:
            q, k = rotary(q, *rotation), rotary(k, *rotation)
        return q, k

    def probs(self, x, rotation):
        """The attention weights that forward applies to the values: (B, H, T, T), row t over positions <= t
        (every position when not causal): softmax rows, or MixiT's static A (mixit_matrices)."""
        B, T, _ = x.shape
        if self.mixit:
            return self.A[:, :T, :T].expand(B, -1, -1, -1)
        q, k = self.query_key(x, rotation)
        return softmax_attention(q * self.scale, k, causal=self.causal)


class MLP(nn.Module):
    """Gated MLP W_D(act(W_G h) * W_U h), n_m = 4n (Llama), act = silu; in the authors' MixiT block
    act = gain * LeakyReLU(slope 1 + activation_cminus / sqrt(n)), W_G, W_U's outputs times sqrt(base_width / n),
    W_D's times sqrt(1 / 4n)."""

    def __init__(self, config):
        super().__init__()
        self.c_gate = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.c_up = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        a = config.authors
        self.authors_block = a.mixit_block == 'authors'
        if self.authors_block:
            self.slope = 1 + a.activation_cminus / math.sqrt(config.n_embd)
            self.gain = nn.init.calculate_gain('leaky_relu', self.slope)
            self.in_scale = width_scale(config, a.base_width)                 # fan_in n, base base_width
            self.out_scale = width_scale(config, 1 / 4)                       # fan_in 4n, base 1

    def forward(self, x):
        if not self.authors_block:
            return self.c_proj(F.silu(self.c_gate(x)) * self.c_up(x))
        g, u = self.in_scale * self.c_gate(x), self.in_scale * self.c_up(x)
        return self.out_scale * self.c_proj(self.gain * F.leaky_relu(g, self.slope) * u)


class Block(nn.Module):
    """Pre-norm residual block: h <- h + attn(norm(h)), h <- h + mlp(norm(h)) (paper 1, §2).

    mixit_block='authors', the authors' MixiT block (every MixiT number of paper 1; docs/deviations.md#mixit-block):
    h <- s h + sqrt(1 - s^2) f(h), s = skip_scaling, linear outputs scaled by sqrt(base_width / fan_in) (MLP,
    width_scale). depth_alpha > 0, their depth-scaled residual: h <- h + (base_n_layer / n_layer)^depth_alpha f(h)."""

    def __init__(self, config, layer):
        super().__init__()
        self.residual = config.residual
        self.ln_1, self.attn = make_norm(config), Attention(config, layer)
        if config.mlp:
            self.ln_2, self.mlp = make_norm(config), MLP(config)
        else:
            self.mlp = None
        a = config.authors
        if a.depth_alpha > 0:
            self.skip, self.branch = 1.0, (a.base_n_layer / config.n_layer) ** a.depth_alpha
        else:
            s = a.skip_scaling if a.mixit_block == 'authors' else 1.0
            self.skip, self.branch = s, math.sqrt(1 - s * s) if s < 1 else 1.0

    def residual_update(self, x, f):
        """h <- skip h + branch f(h) (f alone without a residual stream)."""
        if not self.residual:
            return f
        return (x if self.skip == 1.0 else self.skip * x) + (f if self.branch == 1.0 else self.branch * f)

    def forward(self, x, rotation):
        x = self.residual_update(x, self.attn(self.ln_1(x), rotation))
        if self.mlp is not None:
            x = self.residual_update(x, self.mlp(self.ln_2(x)))
        return x


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd,
                             padding_idx=config.pad_id if config.pad_id >= 0 else None),
            wpe=nn.Embedding(config.block_size, config.n_embd) if config.pos_emb else None,
            h=nn.ModuleList([Block(config, layer) for layer in range(1 if config.looped else config.n_layer)]),
            ln_f=make_norm(config),
        ))
        # the output layer: next-token logits (rows padded to vocab_multiple), or a classifier's (the authors' score)
        self.n_out = config.n_class or config.vocab_size              # the logits forward returns
        rows = config.n_class or -(-config.vocab_size // config.vocab_multiple) * config.vocab_multiple
        self.lm_head = nn.Linear(config.n_embd, rows, bias=False)
        self.head_scale = width_scale(config, config.authors.base_width)
        if config.rope:
            inv_freq = 1.0 / (10000 ** (torch.arange(0, config.head_dim, 2).float() / config.head_dim))
            angles = torch.outer(torch.arange(config.block_size).float(), inv_freq)    # (block_size, d/2)
            self.register_buffer('rope_cos', angles.cos(), persistent=False)
            self.register_buffer('rope_sin', angles.sin(), persistent=False)
        self._init_weights()
        self._freeze()

    def _init_weights(self):
        """N(0, 0.02) for every matrix, N(0, 0.02/sqrt(2L)) for the base block's output projections (GPT-2's,
        docs/deviations.md#initialisation), N(0, qk_init_std) for W_Q, W_K; init='uniform' keeps PyTorch's Linear
        default in the blocks (paper 2). The padding token's embedding (pad_id) is zero."""
        c = self.config
        for name, p in self.named_parameters():
            if name.endswith('bias'):
                nn.init.zeros_(p)
            elif p.dim() == 2 and (c.init == 'normal' or not name.startswith('transformer.h.')):
                std = 0.02
                if name.endswith('c_proj.weight') and c.authors.mixit_block == 'base':
                    std = 0.02 / math.sqrt(2 * c.n_layer)
                elif name.endswith(('c_q.weight', 'c_k.weight')):
                    std = c.qk_init_std
                nn.init.normal_(p, mean=0.0, std=std)
        if c.pad_id >= 0:                   # padding_idx: zero, and nn.Embedding never updates it
            nn.init.zeros_(self.transformer.wte.weight[c.pad_id])

    def _freeze(self):
        c = self.config
        for block in self.transformer.h:
            frozen = [block.attn] if c.freeze_attn else \
                [block.attn.c_q, block.attn.c_k] if c.freeze_qk and c.attn == 'softmax' else []
            frozen += [block.mlp] if c.freeze_mlp and block.mlp is not None else []
            frozen += [block.ln_1] + ([block.ln_2] if block.mlp is not None else []) if c.freeze_norm else []
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
        rotation = (self.rope_cos[:T], self.rope_sin[:T]) if self.config.rope else None
        return x, rotation

    def blocks(self):
        """The n_layer blocks in order (one block repeated when looped)."""
        return [self.transformer.h[0 if self.config.looped else layer] for layer in range(self.config.n_layer)]

    def hidden(self, idx, probs=None):
        """The final hidden states (B, T, n_embd), after ln_f, for token ids idx (B, T); a list probs collects
        every layer's attention weights (B, H, T, T) on the way (Attention.probs)."""
        x, rotation = self.embed(idx)
        for block in self.blocks():
            if probs is not None:
                probs.append(block.attn.probs(block.ln_1(x), rotation))
            x = block(x, rotation)
        return self.transformer.ln_f(x)

    @torch.no_grad()
    def attention_probs(self, idx):
        """Every layer's attention weights for token ids idx (B, T): a list of n_layer tensors (B, H, T, T),
        entry [b, h, t, s] = how much position t takes from position s <= t."""
        self.hidden(idx, probs := [])
        return probs

    def forward(self, idx, targets=None):
        """idx: (B, T) token ids, T <= block_size; targets: (B, T) ids, -1 where a position is not scored.
        Returns (logits, loss): with targets, logits (B, T, V) and the mean cross-entropy in nats over the scored
        positions; without, the last position's logits (B, 1, V) and None. (train.py's loss: head_loss.py.)"""
        x = self.hidden(idx)
        if targets is None:
            return self.head(x[:, [-1], :]), None
        logits = self.head(x)
        wide = torch.promote_types(logits.dtype, torch.float32)       # fp32 (fp64 for a float64 model)
        return logits, F.cross_entropy(logits.flatten(0, 1).to(wide), targets.flatten(), ignore_index=-1)

    def head(self, x):
        """Logits (..., vocab_size or n_class) from final hidden states x (..., n_embd), padded rows left out."""
        logits = self.lm_head(x) if self.head_scale == 1.0 else self.head_scale * self.lm_head(x)
        return logits if self.lm_head.out_features == self.n_out else logits[..., :self.n_out]

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        """AdamW over trainable parameters only; weight decay on the >= 2-D ones (matrices, embeddings)."""
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [{'params': [p for p in params if p.dim() >= 2], 'weight_decay': weight_decay},
                  {'params': [p for p in params if p.dim() < 2], 'weight_decay': 0.0}]
        fused = device_type in ('cuda', 'cpu')   # one kernel over all tensors: ~4x faster than foreach on a CPU
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, fused=fused)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Sample max_new_tokens continuations of idx (B, T), seeing the last block_size tokens; MixiT and learned
        positions cannot go past block_size: ValueError rather than a silent crop."""
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
