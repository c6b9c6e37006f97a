"""
Fixed universal transformers (paper 2: Liu, Andoni & Hsu, "Fixed Universal Transformers").

A universal transformer UTF^m_{H,L,d_in,d} is an attention-only transformer of width m whose attention
weights R_Q, R_K (m×d), R_V (m×m) and unembedding U (m×d_in) are FIXED; only the embedding E (d_in×m)
changes, and the right E makes it compute any target T ∈ TF_{H,L,d_in,d} exactly: UTF(X, E) = T(X).
E plays the role of a program. This file builds the target class, the universal class (float64) and the three
constructions of the fixed weights -- sparse (Thm 3.1, routed as App. A.2; its identity reading as sparse_identity),
looped (Thm 3.2), random (Thm 3.3/3.4) -- with their widths; checks them (`verify`: UTF(XE) = T(X) to 1e-9, causal
or not, every length; `dims`); and writes them into model.py's GPT (write_construction, train.py's --construction).
The paper's §5 runs, where only E and U train, are experiments/paper2/runs.py's (`experiments`, `table` here too).

    python universal.py verify --H=2 --L=3 --construction=looped --causal=True
    python universal.py dims
    python train.py config/universal_dyck1.py --construction=sparse         # trains only E and U
    python -m experiments.paper2 run --which=table1 --size=cpu             # table1 | table2 | msweep

Conventions: rows are tokens (X is n×d_in), as in the paper; every construction is float64.
"""
import itertools
import math
import sys

import torch

from configurator import at_least, fail, run_command
from memory import memory_shortfall
from model import softmax_attention

# -----------------------------------------------------------------------------------------------------
# 1. The target class TF_{H,L,d_in,d} (paper 2, §2.1)


def random_target(H, L, d_in, d, seed=0):
    """A random T ∈ TF_{H,L,d_in,d}: {W_Q, W_K, W_V: (L, H, d_in, d), W_O: (L, H, d, d_in)}, float64.
    Entries N(0, 1/d_in) (W_O: N(0, 1/d)) keep scores O(√d): the softmax is neither flat nor one-hot,
    so a wrong attention pattern would show in the output."""
    g = torch.Generator().manual_seed(seed)
    rn = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
    return dict(W_Q=rn(L, H, d_in, d) / math.sqrt(d_in), W_K=rn(L, H, d_in, d) / math.sqrt(d_in),
                W_V=rn(L, H, d_in, d) / math.sqrt(d_in), W_O=rn(L, H, d, d_in) / math.sqrt(d))


def target_forward(X, W, causal=False):
    """T(X) = X^L with X^l = Σ_h softmax(X^{l-1}W_Q^{l,h} (X^{l-1}W_K^{l,h})^T) X^{l-1} W_V^{l,h} W_O^{l,h}
    (paper 2, §2.1). X: (..., n, d_in) → (..., n, d_in)."""
    L, H = W['W_Q'].shape[:2]
    for l in range(L):
        X = sum(softmax_attention(X @ W['W_Q'][l, h], X @ W['W_K'][l, h], causal) @ X @ W['W_V'][l, h] @ W['W_O'][l, h]
                for h in range(H))
    return X


# -----------------------------------------------------------------------------------------------------
# 2. The universal class UTF^m_{H,L,d_in,d} (paper 2, §2.2) -- the same computation as model.py's GPT
#    with the universal flags (no residual, no norm, no MLP, no RoPE, no 1/√d, heads summed through R_V).


def utf_forward(X, E, R, causal=False):
    """UTF(X, E) = X̃^L U, X̃^0 = X E, X̃^l = Σ_h softmax(X̃^{l-1}R_Q^{l,h} (X̃^{l-1}R_K^{l,h})^T) X̃^{l-1} R_V^{l,h}
    (paper 2, §2.2). X: (..., n, d_in), E: (d_in, m), R: {R_Q, R_K: (L, H, m, d), R_V: (L, H, m, m),
    U: (m, d_in)} → (..., n, d_in). A looped UTF is one whose R_* are equal across l."""
    Xt = X @ E
    L, H = R['R_Q'].shape[:2]
    for l in range(L):
        Xt = sum(softmax_attention(Xt @ R['R_Q'][l, h], Xt @ R['R_K'][l, h], causal) @ Xt @ R['R_V'][l, h]
                 for h in range(H))
    return Xt @ R['U']


# -----------------------------------------------------------------------------------------------------
# 3. Path products and the embedding dimensions
#
# Expanding the sums over heads, both models are sums over head paths p = (p_1..p_L) ∈ [H]^L (Lemma A.5):
#   T(X)   = Σ_p A^{L,p_L}…A^{1,p_1} X M_p,              M_p = Π_s W_V^{s,p_s} W_O^{s,p_s}   (M_∅ = I)
#   UTF(X) = Σ_p Ã^{L,p_L}…Ã^{1,p_1} X E R_p U,          R_p = Π_s R_V^{s,p_s}              (R_∅ = I)
# so UTF(X, E) = T(X) for every X as soon as, for every prefix p (|p| = l-1) and head h (Lemmas A.6, A.7),
#   (3)  E R_p R_Q^{l,h} = M_p W_Q^{l,h},   E R_p R_K^{l,h} = M_p W_K^{l,h},     (4)  E R_p U = M_p  (|p| = L).
# Stacked side by side these are E R_all = W_all with M columns (App. B, eq. 5):


def prefixes(H, t):
    """All head prefixes p ∈ [H]^t (0-based heads), in lexicographic order."""
    return list(itertools.product(range(H), repeat=t))


def geometric(H, n):
    """Σ_{t<n} H^t, the number of tree blocks above depth n, in closed form (n itself for H = 1)."""
    return n if H == 1 else (H ** n - 1) // (H - 1)


def M_all(H, L, d_in, d):
    """M = 2d·H(H^L-1)/(H-1) + H^L·d_in: columns of R_all = number of scalar equations per row of E
    (App. B; its text drops the factor 2 for Q and K). Also the width of our sparse layout, for every H."""
    return 2 * d * H * geometric(H, L) + H ** L * d_in


def m_bar(H, L, d_in, d):
    """m̄ of Thm 3.1 as the paper states it: (L+1)·max(2d, d_in) if H = 1, else M.
    (For H = 1 our tree layout needs only M = 2Ld + d_in ≤ (L+1)·max(2d, d_in).)"""
    return (L + 1) * max(2 * d, d_in) if H == 1 else M_all(H, L, d_in, d)


def m_bar_looped(H, L, d_in, d):
    """m̄_looped of Thm 3.2 as the paper states it: (H^{L+1}-1)/(H-1) · max(2d, d_in) (H = 1: (L+1)·max)."""
    return geometric(H, L + 1) * max(2 * d, d_in)


def m_looped(H, L, d_in, d):
    """Width of our looped layout: (2d + d_in)·(H^{L+1}-1)/(H-1), a block of 2d + d_in per prefix |q| ≤ L. More
    than m̄_looped (App. C's max(2d, d_in) per prefix): a depth-L block q = (p, h) holds both layer L's M_p W_Q^{L,h},
    M_p W_K^{L,h} (read by R_Q, R_K) and the leaf M_q (read by U), and the tied R_V moves whole blocks up to the
    root, so every block needs Q | K | M columns of its own (docs/deviations.md#looped-width)."""
    return geometric(H, L + 1) * (2 * d + d_in)


def path_products(W):
    """M_p for every prefix |p| ≤ L (paper 2, App. A.2). W: target dict → {p: (d_in, d_in)}."""
    L, H, d_in = W['W_Q'].shape[:3]
    Mp = {(): torch.eye(d_in, dtype=W['W_Q'].dtype)}
    for t in range(1, L + 1):
        for p in prefixes(H, t):
            Mp[p] = Mp[p[:-1]] @ W['W_V'][t - 1, p[-1]] @ W['W_O'][t - 1, p[-1]]
    return Mp


def W_all(W):
    """W_all (App. B, eq. 5): [M_p W_Q^{l,h} | M_p W_K^{l,h} for l, p ∈ [H]^{l-1}, h] + [M_p for p ∈ [H]^L].
    → (d_in, M). Column order matches R_all."""
    L, H = W['W_Q'].shape[:2]
    Mp = path_products(W)
    cols = [Mp[p] @ W[k][l, h] for l in range(L) for p in prefixes(H, l) for h in range(H) for k in ('W_Q', 'W_K')]
    return torch.cat(cols + [Mp[p] for p in prefixes(H, L)], dim=1)


def R_all(R):
    """R_all (App. B, eq. 5): [R_p R_Q^{l,h} | R_p R_K^{l,h} for l, p ∈ [H]^{l-1}, h] + [R_p U for p ∈ [H]^L].
    → (m, M). R_p is built once per prefix (H^{L-1} products of m×m matrices)."""
    L, H, m = R['R_Q'].shape[:3]
    Rp = {(): torch.eye(m, dtype=R['R_Q'].dtype)}
    for t in range(1, L + 1):
        for p in prefixes(H, t):
            Rp[p] = Rp[p[:-1]] @ R['R_V'][t - 1, p[-1]]
    cols = [Rp[p] @ R[k][l, h] for l in range(L) for p in prefixes(H, l) for h in range(H) for k in ('R_Q', 'R_K')]
    return torch.cat(cols + [Rp[p] @ R['U'] for p in prefixes(H, L)], dim=1)


def solve_E(W, R):
    """E = W_all R_all^† (App. B, D): least squares, minimum norm. Exact (E R_all = W_all) whenever R_all has
    full column rank M, which random R have almost surely for m ≥ M. Returns (E: (d_in, m), residual), the
    residual ‖E R_all - W_all‖_F / ‖W_all‖_F; it is > 0 for a generic target when m < M (rank R_all ≤ m < M)."""
    Ra, Wa = R_all(R), W_all(W)
    E = torch.linalg.lstsq(Ra.T, Wa.T, driver='gelsd').solution.T
    return E, (torch.linalg.norm(E @ Ra - Wa) / torch.linalg.norm(Wa)).item()


# -----------------------------------------------------------------------------------------------------
# 4. Sparse construction (Thm 3.1, App. A.2; docs/deviations.md#sparse-value-routing)
#
# The m coordinates are the blocks of an H-ary tree, laid out as App. A.2 lays them out: an internal block B_p
# for every prefix p ∈ [H]^t, t < L, holding H Q-subblocks then H K-subblocks of width d, and a leaf block C_p
# of width d_in for every p ∈ [H]^L. E fills them as the paper does: B_p's Q-subblock h holds M_p W_Q^{t+1,h},
# its K-subblock M_p W_K^{t+1,h}, and C_p holds M_p.
#
# R_V^{l,h} is the paper's block-routing map: an identity from block q (its columns) into block (h)+q (its
# rows) for every q it routes -- the root into its h-child, and the tree below the root onto the h-child's
# subtree. Acting on a row x (x R_V), it moves the content of the h-subtree one level up, into the coordinates
# of its parent: no block keeps its own coordinates. Along a head path p, R_p = R_V^{1,p_1}…R_V^{t,p_t} brings
# E's block B_p to the root, where R_Q^{l,h}, R_K^{l,h} read the Q/K-subblocks h and, after L layers, U reads
# the leaf C_p: E R_p R_Q^{l,h} = M_p W_Q^{l,h} and E R_p U = M_p, equations (3)-(4). Leaves rise through
# internal blocks, so an internal block is max(2Hd, d_in) wide: m = M when d_in ≤ 2Hd (every setting the paper
# trains), more otherwise (m_sparse, `dims`).
#
# The identity reading ('sparse_identity') keeps every block in place: R_V^{l,h} is the 0/1 diagonal
# projection onto the blocks whose prefix has p_l = h, and E holds the same contents in a width-M layout. Both
# are exact with attention alone; with a residual stream the identity reading writes every layer's output onto
# the coordinates where the residual already carries E[token], through the same columns of E.


def m_sparse(H, L, d_in, d):
    """Width of the routed sparse layout: Σ_{t<L} H^t · max(2Hd, d_in) + H^L · d_in (= M when d_in ≤ 2Hd)."""
    return geometric(H, L) * max(2 * H * d, d_in) + H ** L * d_in


def sparse_layout(H, L, d_in, d):
    """Column offset of every block of the routed layout: {p: start} for p ∈ [H]^t, t ≤ L, breadth first;
    internal blocks (t < L) are max(2Hd, d_in) wide, leaves (t = L) d_in."""
    w, off, at = max(2 * H * d, d_in), {}, 0
    for t in range(L + 1):
        for p in prefixes(H, t):
            off[p] = at
            at += w if t < L else d_in
    return off


def sparse_weights(H, L, d_in, d, m=None):
    """Fixed {0,1} weights R_Q, R_K (L, H, m, d), R_V (L, H, m, m), U (m, d_in) of Thm 3.1 with routing R_V,
    float64. m defaults to m_sparse. Raises ValueError if m < m_sparse."""
    need = m_sparse(H, L, d_in, d)
    m = need if m is None else m
    if m < need:
        raise ValueError(f"sparse construction needs m >= {need} (m_sparse), got m = {m}")
    off = sparse_layout(H, L, d_in, d)
    z = lambda *s: torch.zeros(*s, dtype=torch.float64)
    R = dict(R_Q=z(L, H, m, d), R_K=z(L, H, m, d), R_V=z(L, H, m, m), U=z(m, d_in))
    for l in range(L):                     # layer l+1 lifts depth s+1 into depth s; what it lifts holds original
        for h in range(H):                 # depth s+1+l: Q/K subblocks while that is < L, the leaf when it is L
            for s in range(L - l):
                width = 2 * H * d if s + 1 + l < L else d_in
                for q in prefixes(H, s):
                    a, b = off[(h,) + q], off[q]
                    R['R_V'][l, h, a:a + width, b:b + width] = torch.eye(width, dtype=torch.float64)
            R['R_Q'][l, h, h * d:(h + 1) * d] = torch.eye(d, dtype=torch.float64)         # the root's subblocks
            R['R_K'][l, h, (H + h) * d:(H + h + 1) * d] = torch.eye(d, dtype=torch.float64)
    R['U'][:d_in] = torch.eye(d_in, dtype=torch.float64)                                   # the root's leaf
    return R


def sparse_embedding(W, m=None):
    """E of Thm 3.1 in the routed layout: B_p's Q-subblock h = M_p W_Q^{t+1,h}, K-subblock h = M_p W_K^{t+1,h},
    leaf C_p = M_p. W: target dict → E: (d_in, m)."""
    L, H, d_in, d = W['W_Q'].shape
    m = m_sparse(H, L, d_in, d) if m is None else m
    Mp, E = path_products(W), torch.zeros(d_in, m, dtype=torch.float64)
    for p, a in sparse_layout(H, L, d_in, d).items():
        if len(p) == L:
            E[:, a:a + d_in] = Mp[p]
            continue
        for h in range(H):
            E[:, a + h * d:a + (h + 1) * d] = Mp[p] @ W['W_Q'][len(p), h]
            E[:, a + (H + h) * d:a + (H + h + 1) * d] = Mp[p] @ W['W_K'][len(p), h]
    return E


def identity_layout(H, L, d_in, d):
    """Column offsets of the identity reading: {('Q'|'K', p, h): start} for the width-d blocks, {('M', p): start}
    for the leaves; M columns in all."""
    blocks = [(k, p, h) for t in range(L) for p in prefixes(H, t) for h in range(H) for k in ('Q', 'K')]
    leaves = len(blocks) * d
    return {**{b: i * d for i, b in enumerate(blocks)},
            **{('M', p): leaves + i * d_in for i, p in enumerate(prefixes(H, L))}}


def identity_weights(H, L, d_in, d, m=None):
    """Fixed {0,1} weights of the identity reading ('sparse_identity'): R_V^{l,h} the diagonal projection onto
    the blocks whose prefix has p_l = h, R_Q^{l,h} the sum of the depth-(l-1) Q-blocks of head h. float64;
    m defaults to M. Raises ValueError if m < M."""
    M = M_all(H, L, d_in, d)
    m = M if m is None else m
    if m < M:
        raise ValueError(f"sparse_identity construction needs m >= M = {M}, got m = {m}")
    z = lambda *s: torch.zeros(*s, dtype=torch.float64)
    R = dict(R_Q=z(L, H, m, d), R_K=z(L, H, m, d), R_V=z(L, H, m, m), U=z(m, d_in))
    for (k, p, *h), a in identity_layout(H, L, d_in, d).items():
        width = d_in if k == 'M' else d
        for l in range(len(p)):                       # block with prefix p survives R_V^{l+1, p_{l+1}}
            R['R_V'][l, p[l], a:a + width, a:a + width] = torch.eye(width, dtype=torch.float64)
        if k == 'M':
            R['U'][a:a + d_in] = torch.eye(d_in, dtype=torch.float64)
        else:                                         # Q/K-block (t, p, h) is read by R_Q^{t+1,h}
            R['R_' + k][len(p), h[0], a:a + d] = torch.eye(d, dtype=torch.float64)
    return R


def identity_embedding(W, m=None):
    """E of the identity reading: Q-block (t,p,h) = M_p W_Q^{t+1,h}, K-block = M_p W_K^{t+1,h}, leaf p = M_p."""
    L, H, d_in, d = W['W_Q'].shape
    m = M_all(H, L, d_in, d) if m is None else m
    Mp, E = path_products(W), torch.zeros(d_in, m, dtype=torch.float64)
    for (k, p, *h), a in identity_layout(H, L, d_in, d).items():
        if k == 'M':
            E[:, a:a + d_in] = Mp[p]
        else:
            E[:, a:a + d] = Mp[p] @ W['W_' + k][len(p), h[0]]
    return E


# -----------------------------------------------------------------------------------------------------
# 5. Looped construction (Thm 3.2, App. C; a (2d + d_in)-block layout, docs/deviations.md#looped-width)
#
# One set R_V^h, R_Q^h, R_K^h serves every layer. Every prefix q, |q| ≤ L, owns a block B_q of width
# 2d + d_in: columns [0, d) Q, [d, 2d) K, [2d, 2d + d_in) M. R_V^h pulls block (h)+p up into block p
# (R_V^h B_p = B_{(h)+p} as selectors, zero on depth-L blocks), so R_{q_1}…R_{q_t} B_∅ = B_q: E's content at
# depth t reaches the root after t layers. U, U_Q, U_K read the root's M, Q, K columns; R_Q^h = R_V^h U_Q,
# R_K^h = R_V^h U_K. E stores M_p W_Q^{l,h}, M_p W_K^{l,h} in block (p, h) (|p| = l-1) and M_q in the M columns
# of depth-L blocks -- so the target's weights need not be tied across layers.


def looped_layout(H, L):
    """Block index of every prefix |q| ≤ L, breadth first: {q: i}, block i starts at column i·(2d + d_in)."""
    return {q: i for i, q in enumerate(q for t in range(L + 1) for q in prefixes(H, t))}


def looped_weights(H, L, d_in, d, m=None):
    """Tied {0,1} weights (R_* repeated over the L layers: (L, H, m, d) etc., equal in l) of our looped layout,
    float64; m defaults to m_looped. Raises ValueError if m < m_looped."""
    w, need = 2 * d + d_in, m_looped(H, L, d_in, d)
    m = need if m is None else m
    if m < need:
        raise ValueError(f"looped construction needs m >= {need}, got m = {m}")
    blk = looped_layout(H, L)
    R_V = torch.zeros(H, m, m, dtype=torch.float64)
    for q, i in blk.items():
        if len(q) < L:
            for h in range(H):                        # coordinate of block (h)+q flows into block q
                j = blk[(h,) + q]
                R_V[h, j * w:(j + 1) * w, i * w:(i + 1) * w] = torch.eye(w, dtype=torch.float64)
    sel = lambda a, b: torch.eye(m, dtype=torch.float64)[:, a:b]  # root-block column selectors
    U_Q, U_K, U = sel(0, d), sel(d, 2 * d), sel(2 * d, w)
    rep = lambda T: T.unsqueeze(0).expand(L, *T.shape).contiguous()
    return dict(R_Q=rep(R_V @ U_Q), R_K=rep(R_V @ U_K), R_V=rep(R_V), U=U)


def looped_embedding(W, m=None):
    """E of the looped layout. W: target dict (weights may differ across layers) → E: (d_in, m)."""
    L, H, d_in, d = W['W_Q'].shape
    w, m = 2 * d + d_in, m_looped(H, L, d_in, d) if m is None else m
    Mp, E = path_products(W), torch.zeros(d_in, m, dtype=torch.float64)
    for q, i in looped_layout(H, L).items():
        if len(q) >= 1:
            p, h, l = q[:-1], q[-1], len(q) - 1
            E[:, i * w:i * w + d] = Mp[p] @ W['W_Q'][l, h]
            E[:, i * w + d:i * w + 2 * d] = Mp[p] @ W['W_K'][l, h]
        if len(q) == L:
            E[:, i * w + 2 * d:(i + 1) * w] = Mp[q]
    return E


# -----------------------------------------------------------------------------------------------------
# 6. Random construction (Thm 3.3 / 3.4, App. B / D)
#
# Draw every fixed matrix i.i.d. U(-1/√m, 1/√m) (PyTorch's default Linear init, as paper 2 §5 does) and
# solve E R_all = W_all. R_all is m×M; it has full column rank almost surely when m ≥ M (a nonzero
# polynomial -- nonzero because the identity reading of the sparse construction, whose R_all selects M distinct
# coordinates, is one point where it does not vanish), so the min-norm solution E = W_all R_all^† is exact.
# Below M it is a least-squares fit with a nonzero residual.


def random_weights(H, L, d_in, d, m, looped=False, seed=0):
    """R_Q, R_K (L, H, m, d), R_V (L, H, m, m), U (m, d_in), entries i.i.d. U(-1/√m, 1/√m), float64; with
    looped=True one draw is shared by all layers (Thm 3.4)."""
    g = torch.Generator().manual_seed(seed)
    u = lambda *s: (2 * torch.rand(*s, generator=g, dtype=torch.float64) - 1) / math.sqrt(m)
    Ll = 1 if looped else L
    R = dict(R_Q=u(Ll, H, m, d), R_K=u(Ll, H, m, d), R_V=u(Ll, H, m, m), U=u(m, d_in))
    if looped:
        R.update({k: R[k].expand(L, *R[k].shape[1:]).contiguous() for k in ('R_Q', 'R_K', 'R_V')})
    return R


FIXED = {  # the constructions whose weights need no target: (weights, embedding, smallest width)
    'sparse': (sparse_weights, sparse_embedding, m_sparse),
    'sparse_identity': (identity_weights, identity_embedding, M_all),
    'looped': (looped_weights, looped_embedding, m_looped)}
CONSTRUCTIONS = (*FIXED, 'random', 'random_looped')


def min_width(construction, H, L, d_in, d):
    """The smallest m a construction works at: m_sparse, M, m_looped, or M for the random ones."""
    return FIXED[construction][2](H, L, d_in, d) if construction in FIXED else M_all(H, L, d_in, d)


def construct(construction, W, m=None, seed=0):
    """Fixed weights R and embedding E for target W. construction ∈ CONSTRUCTIONS; m defaults to min_width.
    Returns (R, E, info) with info['residual'] for the random ones. Raises ValueError on an unknown
    construction or an m too small for a sparse/looped layout."""
    L, H, d_in, d = W['W_Q'].shape
    if construction in FIXED:
        weights, embedding, _ = FIXED[construction]
        return weights(H, L, d_in, d, m), embedding(W, m), {}
    if construction in ('random', 'random_looped'):
        R = random_weights(H, L, d_in, d, M_all(H, L, d_in, d) if m is None else m,
                           looped=construction == 'random_looped', seed=seed)
        E, res = solve_E(W, R)
        return R, E, dict(residual=res)
    raise ValueError(f"unknown construction {construction!r}; expected one of {CONSTRUCTIONS}")


def max_rel_error(W, R, E, causal, lengths, batch=4, seed=1):
    """max over inputs X ~ N(0,1) of shape (batch, n, d_in), n ∈ lengths, of ‖UTF(X,E) - T(X)‖_max / ‖T(X)‖_max.
    The same E for every length."""
    g, d_in, err = torch.Generator().manual_seed(seed), E.shape[0], 0.0
    for n in lengths:
        X = torch.randn(batch, n, d_in, generator=g, dtype=torch.float64)
        Y, Z = target_forward(X, W, causal), utf_forward(X, E, R, causal)
        err = max(err, ((Z - Y).abs().max() / Y.abs().max()).item())
    return err


# -----------------------------------------------------------------------------------------------------
# 7. The universal class inside model.py's GPT
#
# GPTConfig(variant='universal', n_embd=m, n_head=H, head_dim=d, n_layer=L, vocab_size=d_in) is UTF^m with
# one-hot tokens: wte.weight = E (d_in×m), c_q.weight[h·d:(h+1)·d] = R_Q^{l,h}ᵀ (c_k likewise),
# c_v.weight[h·m:(h+1)·m] = R_V^{l,h}ᵀ (heads summed, no output projection), lm_head.weight = Uᵀ, and
# the attention is causal. tests/test_universal.py checks GPT(float64) against utf_forward.


@torch.no_grad()
def load_construction(model, R, E=None, U=True):
    """Write fixed weights R (from sparse_weights, looped_weights, random_weights) into a universal GPT, and E
    into wte if given, and U into lm_head unless U=False. Raises ValueError on a shape mismatch or when the
    model is looped but R is not tied across layers."""
    c = model.config
    L, H, m, d = R['R_Q'].shape
    if (L, H, m, d) != (c.n_layer, c.n_head, c.n_embd, c.head_dim) or c.attn_out_proj:
        raise ValueError(f"R is for (L, H, m, d) = {(L, H, m, d)}; model has "
                         f"{(c.n_layer, c.n_head, c.n_embd, c.head_dim)} (attn_out_proj must be False)")
    if c.looped and not all(torch.equal(R[k][0], R[k][l]) for k in ('R_Q', 'R_K', 'R_V') for l in range(L)):
        raise ValueError("a looped model needs weights tied across layers (looped_weights or random_looped)")
    for l, block in enumerate(model.transformer.h):
        a = block.attn
        a.c_q.weight.copy_(R['R_Q'][l].transpose(1, 2).reshape(H * d, m))
        a.c_k.weight.copy_(R['R_K'][l].transpose(1, 2).reshape(H * d, m))
        a.c_v.weight.copy_(R['R_V'][l].transpose(1, 2).reshape(H * m, m))
    if U:
        model.lm_head.weight.copy_(R['U'].T)
    if E is not None:
        model.transformer.wte.weight.copy_(E)
    return model


def write_construction(model, construction):
    """Write the fixed attention weights of a construction ('sparse' | 'sparse_identity' | 'looped', Thm 3.1 /
    3.2) for the model's own (H, L, d_in, d, m) into a universal GPT; E, U (and any MLP or norm) keep their init.
    train.py's --construction. Raises ValueError when n_embd is below the construction's width (min_width)."""
    c = model.config
    need = min_width(construction, c.n_head, c.n_layer, c.vocab_size, c.head_dim)
    if c.n_embd < need:
        raise ValueError(f"the {construction} construction of H={c.n_head}, L={c.n_layer}, d_in={c.vocab_size}, "
                         f"d={c.head_dim} is {need} wide, n_embd is {c.n_embd}: pass --n_embd={need}")
    build = FIXED[construction][0]
    return load_construction(model, build(c.n_head, c.n_layer, c.vocab_size, c.head_dim, c.n_embd), U=False)


# -----------------------------------------------------------------------------------------------------
# 9. Command line: python universal.py {verify, dims, experiments, table} [--key=value ...]

PAPER_SETTINGS = [  # (name, H, L, d, d_in, the paper's m) -- paper 2, Table 1 caption and Tables 5, 6
    ('dyck1', 4, 2, 24, 4, 1024), ('1-hop', 2, 2, 28, 30, 456), ('2-hop', 2, 3, 28, 30, 1024),
    ('3-hop', 2, 4, 30, 30, 2280), ('4-hop', 2, 4, 30, 30, 2280)]


def verify(H=2,                      # heads per layer
           L=2,                      # layers
           d=3,                      # the target's head width
           d_in=4,                   # the target's input width (vocabulary size)
           n=8,                      # longest input checked (lengths 1, 2, n/2, n)
           construction='sparse',    # sparse | sparse_identity | looped | random | random_looped
           causal=False,             # causal attention in the target and the universal transformer
           m=0,                      # width of the universal transformer; 0: the smallest that works
           seed=0,                   # the target's weights (and the random construction's, the inputs') derive from it
           tol=1e-9):                # PASS when the max relative error is at most this
    """UTF(X E) against T(X) for one random target; exits 1 when the max relative error exceeds tol."""
    if construction not in CONSTRUCTIONS:
        fail(f"construction must be one of {' | '.join(CONSTRUCTIONS)}, got {construction!r}")
    at_least(1, H=H, L=L, d=d, d_in=d_in, n=n)
    at_least(0, m=m, tol=tol)                           # m = 0: the smallest width that works
    check_tree_size(H, L)
    M = M_all(H, L, d_in, d)      # before any allocation: R_V alone holds L H m² floats (M grows as H^L)
    width = m or min_width(construction, H, L, d_in, d)
    inputs = 4 * n * (n * H + width + 2 * d_in)         # a batch of 4: scores, the stream, X and T(X)
    short = memory_shortfall(8 * (L * H * width * (width + 2 * d) + width * d_in + inputs +
                                  (width * M if 'random' in construction else 0)))
    if short:
        fail(f"--H={H} --L={L} --d={d} --d_in={d_in} --n={n}: the {construction} construction's weights (m = "
             f"{width:,}) need more memory than there is: {short} (with inputs up to --n={n}); lower --H, --L or "
             f"--n")
    W = random_target(H, L, d_in, d, seed=seed)
    try:
        R, E, info = construct(construction, W, m=m or None, seed=seed + 1)
    except ValueError as e:
        fail(e)
    lengths = sorted({1, 2, max(1, n // 2), n})
    err = max_rel_error(W, R, E, causal, lengths, seed=seed + 2)
    print(f"target TF_{{H={H},L={L},d_in={d_in},d={d}}}  causal={causal}  construction={construction}")
    print(f"m = {E.shape[1]}   (M = {M}, m̄ = {m_bar(H, L, d_in, d)}, m_sparse = {m_sparse(H, L, d_in, d)}, "
          f"m_looped = {m_looped(H, L, d_in, d)}, m̄_looped(paper) = {m_bar_looped(H, L, d_in, d)})")
    if 'residual' in info:
        print(f"least squares: rank R_all = {torch.linalg.matrix_rank(R_all(R)).item()} of M = "
              f"{M} columns, residual ‖E R_all - W_all‖/‖W_all‖ = {info['residual']:.2e}")
    print(f"lengths n = {lengths}, 4 inputs each, one E for all")
    print(f"max relative error |UTF(XE) - T(X)| / |T(X)| = {err:.3e}   ({'PASS' if err <= tol else 'FAIL'}"
          f" at tol {tol:g})")
    sys.exit(0 if err <= tol else 1)


def check_tree_size(H, L, most=2 ** 200):
    """fail() before anything is counted when the tree of head paths has more than `most` leaves (H^L, read off
    its logarithm: a Python integer H ** L for L = 10^12 would never finish): no width of it fits a machine."""
    if H > 1 and L * math.log2(H) > math.log2(most):
        fail(f"--H={H} --L={L}: H^L = 2^{L * math.log2(H):,.0f} head paths, each a block of the embedding: far "
             f"beyond any memory; lower --H or --L")


def dims(H=0,                        # heads per layer; 0: the paper's settings
         L=0,                        # layers
         d=0,                        # head width
         d_in=0):                    # input width
    """m̄, M, m_sparse, m̄_looped (paper), m_looped (ours), H^{L/2} for the paper's settings (or one in flags)."""
    if H < 0 or (H and min(L, d, d_in) < 1):
        fail(f"H must be >= 0 (0: the paper's settings), and with H given L, d and d_in >= 1, got H={H}, L={L}, "
             f"d={d}, d_in={d_in}")
    check_tree_size(H, L)
    rows = PAPER_SETTINGS if not H else [('custom', H, L, d, d_in, None)]
    print(f"{'setting':8} {'H':>2} {'L':>2} {'d':>3} {'d_in':>4} | {'m̄':>6} {'M':>6} {'m_sparse':>8} "
          f"{'m̄_looped':>10} {'m_looped':>9} {'H^(L/2)':>8} | paper m")
    for name, H, L, d, d_in, paper in rows:
        print(f"{name:8} {H:>2} {L:>2} {d:>3} {d_in:>4} | {m_bar(H, L, d_in, d):>6} {M_all(H, L, d_in, d):>6} "
              f"{m_sparse(H, L, d_in, d):>8} {m_bar_looped(H, L, d_in, d):>10} {m_looped(H, L, d_in, d):>9} "
              f"{H ** (L / 2):>8.3g} | {paper if paper else '-'}")      # Thm 4.1's lower bound, m >= H^(L/2)
    print("m_sparse is the routed sparse layout's width (M when d_in <= 2Hd; sparse_identity's is M); m̄_looped is the "
          "paper's (one max(2d, d_in) block per prefix); m_looped is ours (2d + d_in per prefix), see m_looped's "
          "docstring for why the paper's blocks conflict at depth L.")


if __name__ == '__main__':        # experiments and table: paper 2's runs (python -m experiments.paper2 run, table)
    from experiments.paper2.runs import run, table
    run_command(dict(verify=verify, dims=dims, experiments=run, table=table), doc=__doc__)
