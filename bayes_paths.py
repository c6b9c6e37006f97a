"""
Attention paths in the Bayesian theory of deep multi-head attention (paper 3: Tiberi, Mignacco, Irie,
Sompolinsky, "Dissecting the interplay of attention paths in a statistical mechanics theory of transformers",
NeurIPS 2024; see ../shared/SPEC.md §4, which overrides the paper where they differ).

The network (App. A; tokens are columns, every prior N(0, 1)) is linear in its value weights Θ = (V0, V^{ℓh}, a)
while its attention Ω^{ℓh} reads the bare input x with fixed query/key weights. Its output is a sum over the
H^L attention paths π = (h_1..h_L) of effective weights times attentioned inputs ξ^π(x) (eqs. 5-7). In the
finite-width limit (N, P → ∞, P/N = α) the posterior mean predictor is kernel regression with the kernel
K = (1/H^L) Σ_ππ' U_ππ' C_ππ' whose order parameter U minimises an action S (eqs. 9-12, App. B); the GP limit
(α → 0) is U = I. This file computes all of it in float64 and runs the paper's three experiments:

    python bayes_paths.py hmc      [--key=value ...]   # hidden Markov chain task, Fig. 2 (minutes on 2 cores)
    python bayes_paths.py nuts     [--key=value ...]   # NUTS posterior samples vs theory at N = 10 (needs pyro-ppl)
    python bayes_paths.py oneshot  [--key=value ...]   # one-shot Omniglot, OOD MNIST/FashionMNIST, head pruning, Fig. 3

Flags are the module-level defaults below; a config file (plain assignments) may come first, as in nanoGPT:
`python bayes_paths.py oneshot config/oneshot_paper.py --device=cuda`. Outputs go to `out_dir` (git-ignored).
"""
import ast
import gzip
import json
import math
import os
import sys
import time

import numpy as np
import torch
from tqdm import tqdm

# -----------------------------------------------------------------------------
# defaults, overridable with --key=value
out_dir = 'out-paths'
seed = 0
device = 'cpu'            # only the gradient-descent model of `oneshot` uses it; the theory is float64 on CPU
# the action's minimisation (App. E)
lr = 0.1                  # Adam learning rate on the Cholesky factors of U
tol = 1e-5                # stop when the largest gradient entry is below this
max_iters = 20000
# hidden Markov chain task (App. G)
T = 30                    # chain length (tokens, BOS excluded)
N0_feat = 200             # feature dimension; each token has N0_feat + T + 1 coordinates (one-hot position appended)
P = 100                   # training examples (half per class)
P_test = 1000
tau = 0.01                # Gibbs temperature
beta = 10.0               # softmax hardness of every designed head
sigma_par = 1.0           # noise in the plane of v_+, v_-
sigma_perp = 1.0          # noise off that plane (Fig. 2e: 5.0)
two_paths = False         # Fig. 2e: the network of the good and denoising paths only (layer 2 = uniform head alone)
widths = '10,30,50,100,300,500,1000'
# NUTS check (App. F)
nuts_N = 10
nuts_warmup = 200
nuts_samples = 400
nuts_tree_depth = 8
# one-shot image task (App. H)
data_dir = '../shared/data'   # holds omniglot/images_{background,evaluation}.npz, mnist/, fashion-mnist/ (t10k idx gz)
n_embd = 512              # N of the gradient-descent model
qk_dim = 128              # G
os_heads = 4              # H per layer
os_layers = 2             # L
gd_steps = 4000              # CPU scale: 4000 × 128 episodes ≈ 6 min on 1 core (paper: 41k steps)
gd_batch = 128
gd_lr = 1e-3                 # paper: 3e-4 (too slow for our step budget)
eval_every = 250
n_eval = 1000             # validation/test episodes per set
os_P = 300                # training episodes for the theory (paper: 600; config/oneshot_paper.py)
os_widths = '10,30,100,300,1000'
os_taus = '0.05,0.1,0.25,0.5,1.0'
_config_keys = [k for k, v in list(globals().items()) if not k.startswith('_') and isinstance(v, (int, float, str))]
# -----------------------------------------------------------------------------
DTYPE = torch.float64

# =============================================================================
# 1. Attention, paths and kernels
# =============================================================================


def attention_W(x, W):
    """Attention matrices Ω^h_{st} = softmax_s(x_s·W^h x_t) (paper 3, eq. 3 with W = W_K^T W_Q; App. G.2).
    x: (P, T, D), W: (H, D, D) → (P, H, T, T); the key index s is dim 2 and every column sums to 1."""
    return torch.einsum('psi,hij,ptj->phst', x, W, x).softmax(dim=2)


def attention_QK(x, Q, K):
    """Ω^h_{st} = softmax_s((K^h x_s)·(Q^h x_t)/√G) (paper 3, eq. 3). x: (P, T, D), Q, K: (H, G, D) → (P, H, T, T).
    Contracts K^T Q first (D×D per head), which is cheaper than projecting tokens when G > D/2."""
    W = torch.einsum('hgi,hgj->hij', K, Q) / math.sqrt(Q.shape[1])
    return attention_W(x, W)


def attentioned_inputs(x, Omegas, readout='last'):
    """Attentioned inputs ξ^π(x) = Σ_{t0..t_{L-1}} x_{t0} Ω^{1h1}_{t0t1} ⋯ Ω^{Lh_L}_{t_{L-1}t*} (paper 3, eq. 7).
    x: (P, T, N0); Omegas: L tensors (P, H_ℓ, T, T); readout 'last', 'first' or 'mean' (t*: token or average).
    → (P, |Π|, N0) with |Π| = Π_ℓ H_ℓ and the path index (h_1..h_L) flattened with h_1 outermost."""
    O = Omegas[-1]
    a = {'last': lambda: O[..., -1], 'first': lambda: O[..., 0], 'mean': lambda: O.mean(-1)}[readout]()  # (P, H_L, T)
    for O in reversed(Omegas[:-1]):   # a loop over layers only: tokens and examples are contracted in batch
        a = torch.einsum('phst,pkt->phks', O, a).flatten(1, 2)
    return torch.einsum('pks,psd->pkd', a, x)


def path_kernels(xi, xi2=None):
    """Path-path kernels C_ππ'(x, x') = ξ^π(x)·ξ^π'(x')/N0 (paper 3, eq. 10). xi: (P, |Π|, N0), xi2: (P', |Π|, N0)
    → (P, P', |Π|, |Π|) (a view of a (|Π|, |Π|, P, P') buffer, so `kernel_from_C` is one matmul)."""
    xi2 = xi if xi2 is None else xi2
    return torch.einsum('pad,qbd->abpq', xi, xi2).contiguous().div_(xi.shape[-1]).permute(2, 3, 0, 1)


def kernel_from_C(U, C):
    """Kernel K = (1/|Π|) Σ_ππ' U_ππ' C_ππ' (paper 3, eq. 10). U: (|Π|, |Π|), C: (P, P', |Π|, |Π|) → (P, P')."""
    p, q, n, _ = C.shape
    return (U.reshape(1, n * n) @ C.permute(2, 3, 0, 1).reshape(n * n, p * q)).reshape(p, q) / n


def kernel(U, xi, xi2=None):
    """Kernel K(x, x') = (1/|Π|) Σ_ππ' U_ππ' ξ^π(x)·ξ^π'(x')/N0 (paper 3, eq. 10) without forming C.
    xi: (P, |Π|, N0), xi2: (P', |Π|, N0) → (P, P')."""
    xi2 = xi if xi2 is None else xi2
    return torch.einsum('pad,ab,qbd->pq', xi, U, xi2) / (xi.shape[1] * xi.shape[2])


def kernel_diag(U, xi):
    """Diagonal K(x, x) of `kernel`. xi: (P, |Π|, N0) → (P,)."""
    return torch.einsum('pad,ab,pbd->p', xi, U, xi) / (xi.shape[1] * xi.shape[2])

# =============================================================================
# 2. Order parameters and the action
# =============================================================================
# U^(ℓ) (ℓ = 1..L) is Π_{k≥ℓ} H_k square, indexed by (h_ℓ..h_L) with h_ℓ outermost; U^(1) = U. A scalar U_a sits on
# top. `heads` is the tuple (H_1..H_L); SPEC §4 writes the action for equal H, the per-layer form below is the
# authors' code's and reduces to it (the Fig. 2e network has heads (2, 1)).


def U_a_closed(UL, H_L):
    """Minimiser of S over the scalar U_a: U_a = (−(H−1) + √((H−1)² + 4 Tr U^(L)))/2 (SPEC §4). UL: (H_L, H_L)."""
    return (-(H_L - 1) + torch.sqrt((H_L - 1) ** 2 + 4 * torch.diagonal(UL).sum())) / 2


def partial_trace(U, H):
    """u = Σ_h U_[h,h], the trace over the outermost head index. U: (H·m, H·m) → (m, m)."""
    m = U.shape[0] // H
    return torch.einsum('hahb->ab', U.reshape(H, m, H, m))


def entropy(Us, heads, U_a=None):
    """Entropy part of the action, −Σ_ℓ 𝓛(U^(ℓ) U_ext^(ℓ+1)⁻¹) − 𝓛(U_a) with 𝓛(M) = −Tr M + ln det M, σ = 1
    (paper 3, App. B eqs. 32-33; SPEC §4):
      U_a − ln U_a + Tr U^(L)/U_a − ln det U^(L) + H_L ln U_a
      + Σ_{ℓ<L} [Tr((U^(ℓ+1))⁻¹ u^(ℓ)) − ln det U^(ℓ) + H_ℓ ln det U^(ℓ+1)].
    Us: [U^(1), .., U^(L)] symmetric positive definite; U_a: scalar tensor or None for the closed form. → scalar."""
    L = len(Us)
    U_a = U_a_closed(Us[-1], heads[-1]) if U_a is None else torch.as_tensor(U_a, dtype=Us[-1].dtype)
    S = U_a - torch.log(U_a) + torch.diagonal(Us[-1]).sum() / U_a - torch.logdet(Us[-1]) + heads[-1] * torch.log(U_a)
    for l in range(L - 1):
        u = partial_trace(Us[l], heads[l])
        S = S + torch.trace(torch.linalg.solve(Us[l + 1], u)) - torch.logdet(Us[l]) + heads[l] * torch.logdet(Us[l + 1])
    return S


def energy(K, Y, tau):
    """Energy term ln det(K + τI) + Yᵀ(K + τI)⁻¹Y (paper 3, eq. 12 times P; nats). K: (P, P), Y: (P,) → scalar.
    Raises torch.linalg.LinAlgError if K + τI is not positive definite."""
    Lc = torch.linalg.cholesky(K + tau * torch.eye(K.shape[0], dtype=K.dtype))
    return 2 * torch.log(torch.diagonal(Lc)).sum() + Y @ torch.cholesky_solve(Y[:, None], Lc)[:, 0]


def action(Us, C, Y, N, tau, heads, U_a=None, with_energy=True):
    """Action S = entropy + (1/N)[ln det(K(U)+τI) + Yᵀ(K(U)+τI)⁻¹Y] (paper 3, eqs. 11-12, App. B; SPEC §4).
    Us: [U^(1), .., U^(L)]; C: (P, P, |Π|, |Π|) path kernels of the training set; Y: (P,); N: width. → scalar."""
    S = entropy(Us, heads, U_a)
    if with_energy:
        S = S + energy(kernel_from_C(Us[0], C), Y, tau) / N
    return S


def gp_order_parameters(heads, dtype=DTYPE):
    """The GP limit U^(ℓ) = I, U_a = 1 (paper 3, §3.2). heads: (H_1..H_L) → [U^(1), .., U^(L)]."""
    return [torch.eye(int(np.prod(heads[l:])), dtype=dtype) for l in range(len(heads))]


def minimise_action(C, Y, N, tau, heads, lr=0.1, tol=1e-5, max_iters=20000, with_energy=True, init=None,
                    progress=False):
    """Minimise S over symmetric positive definite U^(ℓ) (U_a in closed form) from the GP point (paper 3, App. E).
    U^(ℓ) = L_ℓ L_ℓᵀ with L_ℓ lower triangular (Cholesky parametrisation keeps U positive definite); Adam with
    learning rate `lr`, halved when S has not improved for 200 steps; stops when the largest gradient entry w.r.t.
    the factors is below `tol` or after `max_iters`. C: (P, P, |Π|, |Π|), Y: (P,).
    → (Us, U_a, info) with info = {'steps', 'max_grad', 'S'}."""
    init = gp_order_parameters(heads, C.dtype) if init is None else init
    Ls = [torch.linalg.cholesky(U).clone().requires_grad_(True) for U in init]
    opt = torch.optim.Adam(Ls, lr=lr)
    best, since, g = float('inf'), 0, float('inf')
    it = range(max_iters)
    for step in (tqdm(it, desc=f'S(U) N={N}', leave=False) if progress else it):
        Us = [torch.tril(Lf) @ torch.tril(Lf).T for Lf in Ls]
        S = action(Us, C, Y, N, tau, heads, with_energy=with_energy)
        opt.zero_grad()
        S.backward()
        g = max(torch.tril(Lf.grad).abs().max().item() for Lf in Ls)
        if g < tol:
            break
        if S.item() < best - 1e-12:
            best, since = S.item(), 0
        else:
            since += 1
            if since >= 200:
                for group in opt.param_groups:
                    group['lr'] /= 2
                since = 0
        opt.step()
    with torch.no_grad():
        Us = [torch.tril(Lf) @ torch.tril(Lf).T for Lf in Ls]
        U_a = U_a_closed(Us[-1], heads[-1])
    return Us, U_a, {'steps': step, 'max_grad': g, 'S': S.item()}

# =============================================================================
# 3. Predictor, alignment, order parameter from weights, head scores
# =============================================================================


def predictor(U, xi, Y, xi_test, tau):
    """Posterior predictor statistics E[f*] = k*ᵀ(K+τI)⁻¹Y, Var[f*] = K(x*,x*) − k*ᵀ(K+τI)⁻¹k* (paper 3, eqs. 29-30).
    U: (|Π|, |Π|); xi: (P, |Π|, N0) train; Y: (P,); xi_test: (P*, |Π|, N0) → (mean (P*,), var (P*,))."""
    K = kernel(U, xi)
    k = kernel(U, xi_test, xi)                                    # (P*, P)
    Lc = torch.linalg.cholesky(K + tau * torch.eye(K.shape[0], dtype=K.dtype))
    mean = k @ torch.cholesky_solve(Y[:, None], Lc)[:, 0]
    var = kernel_diag(U, xi_test) - (k * torch.cholesky_solve(k.T, Lc).T).sum(1)
    return mean, var


def accuracy(mean, y):
    """Classification accuracy A = (1/P*) Σ δ(y, sign E[f*]) (paper 3, §4.1). mean, y: (P*,) → float in [0, 1]."""
    return (torch.sign(mean) == y).double().mean().item()


def alignment(K, Y):
    """Kernel–task alignment |e_kᵀY|/|Y| for the eigenvectors e_k of K in decreasing eigenvalue order
    (paper 3, Fig. 2d; |Y| = √P for ±1 labels). K: (P, P), Y: (P,) → (P,)."""
    evals, evecs = torch.linalg.eigh(K)
    return ((evecs.flip(1).T @ Y).abs() / Y.norm())


def effective_weights(a, Vs):
    """Effective weights V_eff^π = a V^{L h_L} ⋯ V^{1 h_1}/√(N^L) (paper 3, eq. 6). a: (..., N); Vs: L tensors
    (..., H_ℓ, N, N) (leading sample dims allowed) → (..., |Π|, N), path index h_1 outermost."""
    N = a.shape[-1]
    w = a.unsqueeze(-2)                                           # (..., 1, N)
    for V in reversed(Vs):
        w = torch.einsum('...kn,...hnm->...hkm', w, V).flatten(-3, -2)
    return w / N ** (len(Vs) / 2)


def order_parameter_from_weights(a, Vs):
    """Order parameter U_ππ' = ⟨V_eff^π·V_eff^π'⟩/N (paper 3, eq. 13), averaged over any leading sample dims.
    a: (S, N) or (N,), Vs: L tensors (S, H_ℓ, N, N) or (H_ℓ, N, N) → (|Π|, |Π|)."""
    w = effective_weights(a, Vs)
    U = torch.einsum('...an,...bn->...ab', w, w) / a.shape[-1]
    return U.reshape(-1, *U.shape[-2:]).mean(0)


def network_output(xi, V0, a, Vs):
    """Network output in path form f = Σ_π V_eff^π V0 ξ^π/√(N N0 |Π|) (paper 3, eqs. 5-6, equal to eqs. 1-4).
    xi: (P, |Π|, N0), V0: (N, N0), a: (N,), Vs: L tensors (H_ℓ, N, N) → (P,)."""
    w = effective_weights(a, Vs)                                  # (|Π|, N)
    N, N0 = V0.shape
    return torch.einsum('kn,nd,pkd->p', w, V0, xi) / math.sqrt(N * N0 * w.shape[0])


def network_output_layers(x, Omegas, V0, a, Vs, readout='last'):
    """The same network layer by layer (paper 3, eqs. 1-4, tokens as rows): z0 = x V0ᵀ/√N0,
    z^ℓ_t = (1/√(H N)) Σ_h Σ_s Ω^{ℓh}_{st} V^{ℓh} z^{ℓ-1}_s, f = a·z^L_{t*}/√N. x: (P, T, N0) → (P,)."""
    N = V0.shape[0]
    z = x @ V0.T / math.sqrt(x.shape[-1])
    for O, V in zip(Omegas, Vs):
        z = torch.einsum('phst,hnm,psm->ptn', O, V, z) / math.sqrt(V.shape[0] * N)
    zt = {'last': lambda: z[:, -1], 'first': lambda: z[:, 0], 'mean': lambda: z.mean(1)}[readout]()
    return zt @ a / math.sqrt(N)


def head_scores(U, heads):
    """Head scores s^(ℓ)_h = Σ |U_ππ'| over the pairs where π or π' passes through head h of layer ℓ, divided by the
    largest score (paper 3, §4.2; SPEC §4). U: (|Π|, |Π|) → (L, max H) array (NaN where a layer has fewer heads)."""
    A = U.abs().cpu().numpy()
    paths = np.array(np.unravel_index(np.arange(A.shape[0]), heads)).T     # (|Π|, L): h_ℓ of every path
    s = np.full((len(heads), max(heads)), np.nan)
    for l, H in enumerate(heads):
        for h in range(H):
            through = paths[:, l] == h
            s[l, h] = A[through[:, None] | through[None, :]].sum()
    return s / np.nanmax(s)

# =============================================================================
# 4. The hidden Markov chain task (App. G)
# =============================================================================


def hmc_data(n, T, N0, sigma_par, sigma_perp, gen):
    """Hidden Markov chain examples (paper 3, App. G.1): class y = +1 keeps its state with probability 0.7, y = −1
    with 0.3; token x_t = v_state + σ_∥ (in-plane noise) + σ_⊥ (off-plane noise); a zero BOS token is prepended and a
    one-hot position of size T+1 appended. n even → x: (n, T+1, N0+T+1) float64, y: (n,) in {+1, −1}, half each."""
    y = torch.cat([torch.ones(n // 2), -torch.ones(n - n // 2)]).double()
    p_stay = torch.where(y > 0, 0.7, 0.3)[:, None]
    s0 = torch.where(torch.rand(n, 1, generator=gen) < 0.5, 1.0, -1.0)
    flip = torch.where(torch.rand(n, T - 1, generator=gen) < p_stay, 1.0, -1.0)
    states = torch.cat([s0, s0 * torch.cumprod(flip, 1)], 1).double()            # (n, T) in {+1, −1}
    v_plus, v_minus = hmc_state_vectors(N0)
    x = torch.where(states[..., None] > 0, v_plus, v_minus)
    g = torch.randn(n, T, N0, generator=gen, dtype=DTYPE)
    E = torch.stack([v_plus - v_minus, v_plus + v_minus])
    E = E / E.norm(dim=1, keepdim=True)                                          # orthonormal basis of the plane
    g_par = (g @ E.T) @ E
    x = x + sigma_par * g_par + sigma_perp * (g - g_par)
    x = torch.cat([torch.zeros(n, 1, N0, dtype=DTYPE), x], 1)                    # BOS
    pos = torch.eye(T + 1, dtype=DTYPE).expand(n, T + 1, T + 1)
    return torch.cat([x, pos], 2), y


def hmc_state_vectors(N0):
    """v_+ = √2 [1..1, 0..0], v_− = √2 [0..0, 1..1] (halves of N0). → two (N0,) float64 tensors."""
    half = torch.arange(N0) < N0 // 2
    return half.double() * math.sqrt(2), (~half).double() * math.sqrt(2)


def hmc_heads(N0, T, beta, gen):
    """Designed query-key matrices W = β·blockdiag(W_ff, W_pp) (+ random cross blocks) for L = 2, H = 2
    (paper 3, App. G.2; SPEC §4). Layer 1 head 0 "good": W_ff = q qᵀ, q = (v_+ − v_−)/N0, W_pp[s, s+1] = 1 (s ≥ 1),
    W_pp[0, t≥1] = 3/2; layer 2 head 0: W_pp = all ones (uniform); head 1 of each layer random. → [W1, W2], (2, D, D)."""
    D = N0 + T + 1
    v_plus, v_minus = hmc_state_vectors(N0)
    q = (v_plus - v_minus) / N0
    good1 = torch.zeros(D, D, dtype=DTYPE)
    good1[:N0, :N0] = torch.outer(q, q)
    s = torch.arange(1, T)
    good1[N0 + s, N0 + s + 1] = 1.0                 # a token attends its predecessor (key s, query s+1) ...
    good1[N0, N0 + 1:] = 1.5                        # ... if in the same state, else the BOS token
    good2 = torch.zeros(D, D, dtype=DTYPE)
    good2[N0:, N0:] = 1.0                           # uniform attention
    def random_head():
        W = torch.randn(D, D, generator=gen, dtype=DTYPE) / math.sqrt(N0)   # cross blocks
        W[:N0, :N0] = torch.randn(N0, N0, generator=gen, dtype=DTYPE) / N0
        W[N0:, N0:] = torch.randn(T + 1, T + 1, generator=gen, dtype=DTYPE)
        return W
    return [beta * torch.stack([good1, random_head()]), beta * torch.stack([good2, random_head()])]


HMC_PATHS = ['good', 'adv-1', 'denoise', 'adv-2']   # (h1, h2) = (0,0), (0,1), (1,0), (1,1); head 0 = designed


def hmc_setup(n_train, n_test, seed, T=30, N0=200, sigma_par=1.0, sigma_perp=1.0, beta=10.0, readout='last'):
    """Data, heads and attentioned inputs of the HMC experiment. → dict with xi_tr (P, 4, D), y_tr, xi_te, y_te and
    sub-networks 'all' (heads (2,2)), 'good' ((1,1)), 'good+denoise' ((2,1)) as (path indices, heads)."""
    gen = torch.Generator().manual_seed(seed)
    Ws = hmc_heads(N0, T, beta, gen)
    x_tr, y_tr = hmc_data(n_train, T, N0, sigma_par, sigma_perp, gen)
    x_te, y_te = hmc_data(n_test, T, N0, sigma_par, sigma_perp, gen)
    xi_tr = attentioned_inputs(x_tr, [attention_W(x_tr, W) for W in Ws], readout)
    xi_te = attentioned_inputs(x_te, [attention_W(x_te, W) for W in Ws], readout)
    nets = {'all': ([0, 1, 2, 3], (2, 2)), 'good': ([0], (1, 1)), 'good+denoise': ([0, 2], (2, 1))}
    return dict(xi_tr=xi_tr, y_tr=y_tr, xi_te=xi_te, y_te=y_te, nets=nets, Ws=Ws, x_tr=x_tr)


def gp_accuracy(xi_tr, y_tr, xi_te, y_te, tau):
    """Test accuracy of the GP limit U = I on the given paths. xi: (P, |Π|, N0) → float."""
    U = torch.eye(xi_tr.shape[1], dtype=xi_tr.dtype)
    return accuracy(predictor(U, xi_tr, y_tr, xi_te, tau)[0], y_te)

# =============================================================================
# 5. NUTS posterior sampling (App. F)
# =============================================================================


def nuts_sample(xi, Y, N, heads, tau, warmup, samples, seed=0, max_tree_depth=8, progress=True, jit=True):
    """Sample Θ = (V0, V^{ℓh}, a) from the posterior ∝ exp(−Σ(f−y)²/(2τ) − ‖Θ‖²/2) with Pyro's NUTS (paper 3, App. F).
    xi: (P, |Π|, N0) float64, Y: (P,). → dict of samples {'V0': (S, N, N0), 'V1'..'VL': (S, H_ℓ, N, N), 'a': (S, N)}.
    Raises ImportError if pyro-ppl is not installed."""
    import pyro
    import pyro.distributions as dist
    from pyro.infer import MCMC, NUTS
    pyro.set_rng_seed(seed)
    N0 = xi.shape[-1]

    def model():
        V0 = pyro.sample('V0', dist.Normal(torch.zeros(N, N0, dtype=xi.dtype), 1.0).to_event(2))
        Vs = [pyro.sample(f'V{l + 1}', dist.Normal(torch.zeros(H, N, N, dtype=xi.dtype), 1.0).to_event(3))
              for l, H in enumerate(heads)]
        a = pyro.sample('a', dist.Normal(torch.zeros(N, dtype=xi.dtype), 1.0).to_event(1))
        pyro.sample('y', dist.Normal(network_output(xi, V0, a, Vs), math.sqrt(tau)).to_event(1), obs=Y)

    kernel = NUTS(model, max_tree_depth=max_tree_depth, target_accept_prob=0.8, jit_compile=jit, ignore_jit_warnings=True)
    mcmc = MCMC(kernel, num_samples=samples,
                warmup_steps=warmup, disable_progbar=not progress)
    mcmc.run()
    return {k: v.detach() for k, v in mcmc.get_samples().items()}

# =============================================================================
# 6. One-shot image classification (App. H)
# =============================================================================
# Omniglot: the official data is github.com/brendenlake/omniglot (python/images_background.zip, images_evaluation.zip);
# we read the numpy arrays built from it (../shared/data/omniglot/README.md): `images` bool (n_chars, 20, 105, 105),
# True = background. MNIST / FashionMNIST: the standard t10k idx gz files.

PATCH = 8      # 8×8 patches of a 32×32 image → 16 tokens per image, T = 48 per episode, token dimension N0 = 64


def image_tokens(imgs):
    """Patch tokens of images (paper 3, §4.2): resize to 32×32 (area average), ink = 1, cut into 8×8 patches,
    LayerNorm each patch (no affine). imgs: (n, h, w) float in [0, 1], ink high → (n, 16, 64) float32."""
    x = torch.nn.functional.interpolate(imgs[:, None].float(), size=(32, 32), mode='area')[:, 0]
    x = x.unfold(1, PATCH, PATCH).unfold(2, PATCH, PATCH).reshape(len(imgs), -1, PATCH * PATCH)
    return torch.nn.functional.layer_norm(x, (PATCH * PATCH,))


def load_omniglot(path):
    """Omniglot arrays → (tokens (n_chars·20, 16, 64), labels (n_chars·20,)). Raises FileNotFoundError."""
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    d = np.load(path)
    imgs = torch.from_numpy(~d['images']).float()                 # ink = 1
    n_chars, n_draw = imgs.shape[:2]
    toks = torch.cat([image_tokens(chunk) for chunk in imgs.reshape(-1, *imgs.shape[2:]).split(2000)])
    return toks, torch.arange(n_chars).repeat_interleave(n_draw)


def load_idx(folder):
    """MNIST-format test set (t10k-images/labels-idx*-ubyte.gz) → (tokens (n, 16, 64), labels (n,)).
    Raises FileNotFoundError."""
    pi, pl = os.path.join(folder, 't10k-images-idx3-ubyte.gz'), os.path.join(folder, 't10k-labels-idx1-ubyte.gz')
    for p in (pi, pl):
        if not os.path.exists(p):
            raise FileNotFoundError(p)
    imgs = np.frombuffer(gzip.open(pi).read(), np.uint8, offset=16).reshape(-1, 28, 28)
    labels = np.frombuffer(gzip.open(pl).read(), np.uint8, offset=8)
    return image_tokens(torch.from_numpy(imgs / 255.0)), torch.from_numpy(labels.astype(np.int64))


def position_code(T, d):
    """Sinusoidal position code (Vaswani et al.), normalised to unit variance per coordinate. → (T, d) float32."""
    pos = torch.arange(T)[:, None].float()
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2).float() / d)
    pe = torch.zeros(T, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe * math.sqrt(2)


def label_vectors(d, seed=1234):
    """Fixed N(0,1) label vectors for "+", "−", "?" (paper 3, §4.2). → (3, d) float32."""
    return torch.randn(3, d, generator=torch.Generator().manual_seed(seed))


def episodes(tokens, labels, n, gen):
    """2-way 1-shot episodes [support_a (+), support_b (−), query (?)] (paper 3, §4.2; SPEC §4): two distinct classes,
    the query a different image of class a (y = +1) or b (y = −1). tokens: (M, 16, d), labels: (M,) with every class
    having ≥ 2 images. → x: (n, 48, d) float32 (label vectors and position code added), y: (n,) float in {+1, −1}."""
    classes, counts = torch.unique(labels, return_counts=True)
    order = torch.argsort(labels, stable=True)
    start = torch.cumsum(counts, 0) - counts
    ca = torch.randint(len(classes), (n,), generator=gen)
    cb = (ca + 1 + torch.randint(len(classes) - 1, (n,), generator=gen)) % len(classes)
    ia = torch.floor(torch.rand(n, generator=gen) * counts[ca]).long()
    ib = torch.floor(torch.rand(n, generator=gen) * counts[cb]).long()
    y = torch.where(torch.rand(n, generator=gen) < 0.5, 1.0, -1.0)
    cq, iq_s = torch.where(y > 0, ca, cb), torch.where(y > 0, ia, ib)
    iq = (iq_s + 1 + torch.floor(torch.rand(n, generator=gen) * (counts[cq] - 1)).long()) % counts[cq]
    pick = lambda cl, i: tokens[order[start[cl] + i]]
    d = tokens.shape[-1]
    lab = label_vectors(d)
    x = torch.cat([pick(ca, ia) + lab[0], pick(cb, ib) + lab[1], pick(cq, iq) + lab[2]], 1)
    return x + position_code(x.shape[1], d), y


class PathsNet(torch.nn.Module):
    """The gradient-descent model of paper 3 (eqs. 1-4): linear input V0 to width N, L layers of H heads whose
    attention reads the bare input (Q, K: (H, G, N0)), value weights V^{ℓh}, no residual, no MLP, mean-pool readout a.
    Paper parametrisation: every weight N(0,1) times the explicit 1/√fan-in of eqs. 1-4, so `order_parameter_from_weights`
    applies to (a, Vs) as they are. Computed in path form (eq. 5), which equals the layer form; `path_mask` (|Π|,) zeroes
    the paths through pruned heads. x: (B, T, N0) → f: (B,)."""

    def __init__(self, N0, N, G, heads):
        super().__init__()
        self.heads = tuple(heads)
        self.V0 = torch.nn.Parameter(torch.randn(N, N0))
        self.Vs = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(H, N, N)) for H in heads])
        self.a = torch.nn.Parameter(torch.randn(N))
        self.Q = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(H, G, N0) / math.sqrt(N0)) for H in heads])
        self.K = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(H, G, N0) / math.sqrt(N0)) for H in heads])

    def omegas(self, x):
        return [attention_QK(x, Q, K) for Q, K in zip(self.Q, self.K)]

    def forward(self, x, path_mask=None):
        xi = attentioned_inputs(x, self.omegas(x), 'mean')
        if path_mask is not None:
            xi = xi * path_mask[None, :, None]
        return network_output(xi, self.V0, self.a, list(self.Vs))


def head_path_mask(heads, pruned):
    """Mask over paths (h_1..h_L) that zeroes every path through a pruned head. pruned: iterable of (ℓ, h) → (|Π|,)."""
    paths = np.array(np.unravel_index(np.arange(int(np.prod(heads))), heads)).T
    keep = np.ones(len(paths), bool)
    for l, h in pruned:
        keep &= paths[:, l] != h
    return torch.from_numpy(keep.astype(np.float32))

# =============================================================================
# 7. Experiments
# =============================================================================


def save_json(obj, path):
    with open(path, 'w') as f:
        json.dump(obj, f, indent=1)


def plot_U_grid(Us_by_N, names, path, title):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    keys = list(Us_by_N)
    fig, axes = plt.subplots(1, len(keys), figsize=(2.2 * len(keys) + 0.6, 2.6))
    axes = np.atleast_1d(axes)
    vmax = max(np.abs(np.array(U)).max() for U in Us_by_N.values())
    for ax, k in zip(axes, keys):
        im = ax.imshow(np.array(Us_by_N[k]), cmap='RdBu_r', vmin=-vmax, vmax=vmax)
        ax.set_title(str(k), fontsize=9)
        ax.set_xticks(range(len(names)))
        ax.set_yticks(range(len(names)))
        ax.set_xticklabels(names, rotation=90, fontsize=6)
        ax.set_yticklabels(names if ax is axes[0] else [], fontsize=6)
    fig.colorbar(im, ax=list(axes), shrink=0.8)
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches='tight')
    plt.close(fig)


def run_hmc():
    """Fig. 2 of paper 3: GP accuracies of sub-networks, finite-width theory for a sweep of N, U, kernel-PC overlaps."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    os.makedirs(out_dir, exist_ok=True)
    Ns = [int(n) for n in str(widths).split(',')]
    d = hmc_setup(P, P_test, seed, T, N0_feat, sigma_par, sigma_perp, beta)
    gp = {}
    for name, (idx, hs) in d['nets'].items():
        gp[name] = gp_accuracy(d['xi_tr'][:, idx], d['y_tr'], d['xi_te'][:, idx], d['y_te'], tau)
    net = 'good+denoise' if two_paths else 'all'
    idx, heads = d['nets'][net]
    names = [HMC_PATHS[i] for i in idx]
    xi_tr, xi_te, y_tr, y_te = d['xi_tr'][:, idx], d['xi_te'][:, idx], d['y_tr'], d['y_te']
    C = path_kernels(xi_tr)
    print(f"HMC task: P={P}, P*={P_test}, T={T}, N0={xi_tr.shape[-1]}, tau={tau}, sigma_par={sigma_par}, "
          f"sigma_perp={sigma_perp}, network '{net}' heads={heads}, paths={names}")
    print("GP limit accuracy: " + ", ".join(f"{k} {v:.3f}" for k, v in gp.items()))
    fw, Us, info = {}, {}, {}
    for N in tqdm(Ns, desc='widths'):
        t0 = time.time()
        U_list, U_a, inf = minimise_action(C, y_tr, N, tau, heads, lr=lr, tol=tol, max_iters=max_iters)
        fw[N] = accuracy(predictor(U_list[0], xi_tr, y_tr, xi_te, tau)[0], y_te)
        Us[N] = U_list[0].tolist()
        info[N] = dict(inf, U_a=U_a.item(), seconds=time.time() - t0)
        tqdm.write(f"N={N:5d}  acc={fw[N]:.3f}  steps={inf['steps']}  max|grad|={inf['max_grad']:.1e}  "
                   f"S={inf['S']:.4f}  ({time.time() - t0:.1f}s)")
    U10 = torch.tensor(Us[Ns[0]])
    print(f"\nU at N={Ns[0]} (rows/cols: {', '.join(names)}):")
    for n, row in zip(names, U10.tolist()):
        print(f"  {n:>8s} " + " ".join(f"{v:8.3f}" for v in row))
    res = {'gp_all': gp['all'], 'gp_good': gp['good'], 'gp_good_denoise': gp['good+denoise'],
           'network': net, 'paths': names, 'fw': fw, 'U': Us, 'minimisation': info,
           'config': dict(P=P, P_test=P_test, T=T, N0_feat=N0_feat, tau=tau, beta=beta, sigma_par=sigma_par,
                          sigma_perp=sigma_perp, seed=seed)}
    save_json(res, os.path.join(out_dir, 'results.json'))
    # --- figures (Fig. 2c top, 2c bottom, 2d; 2e with --two_paths=True --sigma_perp=5)
    tag = '_2paths' if two_paths else ''
    nuts_path = os.path.join(out_dir, 'nuts.json')
    fig, ax = plt.subplots(figsize=(4.2, 3.2))
    ax.semilogx(Ns, [fw[N] for N in Ns], 'b-x', label='theory (finite width)')
    if os.path.exists(nuts_path) and not two_paths:
        nj = json.load(open(nuts_path))
        ax.plot([nj['N']], [nj['acc_sampled']], 'ko', label='NUTS samples')
    gp_net = gp['good+denoise'] if two_paths else gp['all']
    ax.axhline(gp_net, color='r', ls='-', label='GP, ' + ('good+denoise' if two_paths else 'all paths'))
    ax.axhline(gp['good'], color='r', ls='--', label='GP, good path')
    if not two_paths:
        ax.axhline(gp['good+denoise'], color='r', ls=':', label='GP, good+denoise')
    ax.set_xlabel('N')
    ax.set_ylabel('test accuracy')
    ax.set_title(f'HMC task, σ⊥={sigma_perp:g}', fontsize=10)
    ax.legend(fontsize=7)
    fig.savefig(os.path.join(out_dir, f'paths_hmc_accuracy{tag}.png'), dpi=110, bbox_inches='tight')
    plt.close(fig)
    plot_U_grid({f'N={N}': Us[N] for N in Ns}, names, os.path.join(out_dir, f'paths_hmc_U{tag}.png'),
                'order parameter U (GP limit: identity)')
    K_fw = kernel(U10.double(), xi_tr)
    K_gp = kernel(torch.eye(len(idx), dtype=DTYPE), xi_tr)
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    ax.plot(range(1, 31), alignment(K_fw, y_tr)[:30], 'b.-', label=f'N={Ns[0]}')
    ax.plot(range(1, 31), alignment(K_gp, y_tr)[:30], '.-', color='orange', label='GP limit')
    ax.set_xlabel('kernel PC rank')
    ax.set_ylabel('|overlap with Y|')
    ax.legend(fontsize=8)
    fig.savefig(os.path.join(out_dir, f'paths_hmc_alignment{tag}.png'), dpi=110, bbox_inches='tight')
    plt.close(fig)
    # --- table
    print(f"\n| {'N':>6s} | FW theory | GP ({net}) | GP good | GP good+denoise |")
    for N in Ns:
        print(f"| {N:6d} | {fw[N]:9.3f} | {gp_net:9.3f} | {gp['good']:7.3f} | {gp['good+denoise']:15.3f} |")
    print(f"results and figures in {out_dir}/")


def run_nuts():
    """App. F check: NUTS samples of the HMC network at N = nuts_N against the theory at the same N."""
    try:
        import pyro  # noqa: F401
    except ImportError:
        sys.exit("bayes_paths.py nuts needs pyro-ppl (pip install pyro-ppl); it is an optional dependency")
    os.makedirs(out_dir, exist_ok=True)
    d = hmc_setup(P, P_test, seed, T, N0_feat, sigma_par, sigma_perp, beta)
    idx, heads = d['nets']['good+denoise' if two_paths else 'all']
    names = [HMC_PATHS[i] for i in idx]
    xi_tr, xi_te, y_tr, y_te = d['xi_tr'][:, idx], d['xi_te'][:, idx], d['y_tr'], d['y_te']
    C = path_kernels(xi_tr)
    Us, U_a, inf = minimise_action(C, y_tr, nuts_N, tau, heads, lr=lr, tol=tol, max_iters=max_iters)
    U_th = Us[0]
    mean_th = predictor(U_th, xi_tr, y_tr, xi_te, tau)[0]
    t0 = time.time()
    smp = nuts_sample(xi_tr, y_tr, nuts_N, heads, tau, nuts_warmup, nuts_samples, seed, nuts_tree_depth)
    secs = time.time() - t0
    Vs = [smp[f'V{l + 1}'] for l in range(len(heads))]
    U_s = order_parameter_from_weights(smp['a'], Vs)
    f_te = torch.stack([network_output(xi_te, smp['V0'][s], smp['a'][s], [V[s] for V in Vs])
                        for s in range(len(smp['a']))])
    mean_s = f_te.mean(0)
    res = dict(N=nuts_N, acc_theory=accuracy(mean_th, y_te), acc_sampled=accuracy(mean_s, y_te),
               acc_gp=gp_accuracy(xi_tr, y_tr, xi_te, y_te, tau),
               agree_sign=(torch.sign(mean_s) == torch.sign(mean_th)).double().mean().item(),
               corr_mean=torch.corrcoef(torch.stack([mean_s, mean_th]))[0, 1].item(),
               U_theory=U_th.tolist(), U_sampled=U_s.tolist(),
               U_rel_err=((U_s - U_th).norm() / U_th.norm()).item(), paths=names,
               warmup=nuts_warmup, samples=nuts_samples, seconds=secs)
    save_json(res, os.path.join(out_dir, 'nuts.json'))
    plot_U_grid({'theory': res['U_theory'], 'NUTS': res['U_sampled']}, names,
                os.path.join(out_dir, 'paths_nuts_U.png'), f'U at N={nuts_N}: theory vs sampled')
    print(f"\nU at N={nuts_N}, theory | sampled ({', '.join(names)}):")
    for n, r1, r2 in zip(names, res['U_theory'], res['U_sampled']):
        print(f"  {n:>8s} " + " ".join(f"{v:7.3f}" for v in r1) + "  | " + " ".join(f"{v:7.3f}" for v in r2))
    print(f"\n| N={nuts_N} | theory acc | NUTS mean-predictor acc | GP acc | sign agreement | corr(E f*) | "
          f"|U_s−U_th|/|U_th| | NUTS time |")
    print(f"| {'':4s} | {res['acc_theory']:10.3f} | {res['acc_sampled']:23.3f} | {res['acc_gp']:6.3f} | "
          f"{res['agree_sign']:14.3f} | {res['corr_mean']:10.3f} | {res['U_rel_err']:16.3f} | {secs:7.0f} s |")


def run_oneshot():
    """Fig. 3 of paper 3 at CPU scale: train the GD model on Omniglot episodes, theory on its Q/K for a sweep of N
    (τ tuned on validation episodes), ID/OOD accuracy, head scores and pruning."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(seed)
    om = os.path.join(data_dir, 'omniglot')
    tr_tok, tr_lab = load_omniglot(os.path.join(om, 'images_background.npz'))
    ev_tok, ev_lab = load_omniglot(os.path.join(om, 'images_evaluation.npz'))
    n_ev = int(ev_lab.max()) + 1
    val_sel, te_sel = ev_lab < n_ev // 2, ev_lab >= n_ev // 2   # evaluation characters split in two halves
    ood = {'mnist': load_idx(os.path.join(data_dir, 'mnist')), 'fashion': load_idx(os.path.join(data_dir, 'fashion-mnist'))}
    g = torch.Generator().manual_seed(seed + 1)
    sets = {'val': episodes(ev_tok[val_sel], ev_lab[val_sel], n_eval, g),
            'omniglot': episodes(ev_tok[te_sel], ev_lab[te_sel], n_eval, g)}
    for k, (tk, lb) in ood.items():
        sets[k] = episodes(tk, lb, n_eval, g)
    N0 = tr_tok.shape[-1]
    heads = (os_heads,) * os_layers
    dev = torch.device(device)
    model = PathsNet(N0, n_embd, qk_dim, heads).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=gd_lr)

    @torch.no_grad()
    def evaluate(name, mask=None):
        x, y = sets[name]
        m = None if mask is None else mask.to(dev)
        f = torch.cat([model(xb.to(dev), m).cpu() for xb in x.split(500)])
        return accuracy(f, y)

    print(f"one-shot: GD model N={n_embd}, G={qk_dim}, heads={heads}, N0={N0}, T=48, {gd_steps} steps × batch {gd_batch},"
          f" Adam {gd_lr}")
    g_tr = torch.Generator().manual_seed(seed + 2)
    best, best_state, t0 = -1.0, None, time.time()
    pbar = tqdm(range(1, gd_steps + 1), desc='GD training')
    for step in pbar:
        x, y = episodes(tr_tok, tr_lab, gd_batch, g_tr)      # fresh episodes every step
        loss = ((model(x.to(dev)) - y.to(dev)) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % eval_every == 0 or step == gd_steps:
            model.eval()
            acc_val = evaluate('val')
            model.train()
            if acc_val > best:
                best, best_state = acc_val, {k: v.detach().clone() for k, v in model.state_dict().items()}
            pbar.set_postfix(loss=f'{loss.item():.3f}', val=f'{acc_val:.3f}')
            tqdm.write(f"step {step}: loss {loss.item():.4f}, val acc {acc_val:.3f}, {time.time() - t0:.0f}s")
    train_secs = time.time() - t0
    model.load_state_dict(best_state)
    model.eval()
    gd_acc = {k: evaluate(k) for k in ('val', 'omniglot', 'mnist', 'fashion')}
    print("GD model (best val checkpoint): " + ", ".join(f"{k} {v:.3f}" for k, v in gd_acc.items()))
    # --- theory on the trained Q, K (float64)
    Qs = [Q.detach().cpu().double() for Q in model.Q]
    Ks = [K.detach().cpu().double() for K in model.K]
    xi_of = lambda x: attentioned_inputs(x.double(), [attention_QK(x.double(), Q, K) for Q, K in zip(Qs, Ks)], 'mean')
    x_tr, y_tr = episodes(tr_tok, tr_lab, os_P, torch.Generator().manual_seed(seed + 3))
    y_tr = y_tr.double()
    xi_tr = xi_of(x_tr)
    xi_sets = {k: (xi_of(x), y.double()) for k, (x, y) in sets.items()}
    C = path_kernels(xi_tr)
    taus = [float(t) for t in str(os_taus).split(',')]
    Ns = [int(n) for n in str(os_widths).split(',')]

    def evaluate_U(U, t):
        return {k: accuracy(predictor(U, xi_tr, y_tr, xi, t)[0], y) for k, (xi, y) in xi_sets.items()}

    I = torch.eye(xi_tr.shape[1], dtype=DTYPE)
    gp_all = {t: evaluate_U(I, t) for t in taus}
    tau_gp = max(taus, key=lambda t: gp_all[t]['val'])
    theory = {'GP': dict(gp_all[tau_gp], tau=tau_gp)}
    Us_best = {}
    for N in tqdm(Ns, desc='theory widths'):
        best_acc = None
        for t in taus:
            Us, U_a, inf = minimise_action(C, y_tr, N, t, heads, lr=lr, tol=tol, max_iters=max_iters)
            acc = evaluate_U(Us[0], t)
            if best_acc is None or acc['val'] > best_acc['val']:
                best_acc, Us_best[N] = dict(acc, tau=t, steps=inf['steps'], max_grad=inf['max_grad']), Us[0]
        theory[N] = best_acc
        tqdm.write(f"N={N}: tau={best_acc['tau']}, " + ", ".join(f"{k} {best_acc[k]:.3f}" for k in sets)
                   + f" (steps {best_acc['steps']}, max|grad| {best_acc['max_grad']:.1e})")
    # --- head scores and pruning (Fig. 3e/f): scores from the theory's U at the smallest N
    U_gd = order_parameter_from_weights(model.a.detach().cpu().double(), [V.detach().cpu().double() for V in model.Vs])
    scores = head_scores(Us_best[Ns[0]], heads)
    scores_gd = head_scores(U_gd, heads)
    all_heads = [(l, h) for l in range(len(heads)) for h in range(heads[l])]
    drop = {}
    for l, h in all_heads:
        mask = head_path_mask(heads, [(l, h)])
        drop[(l, h)] = {k: gd_acc[k] - evaluate(k, mask) for k in ('omniglot', 'mnist', 'fashion')}
    order = sorted(all_heads, key=lambda lh: scores[lh])
    prune_curve = []
    for n in range(len(all_heads) + 1):
        mask = head_path_mask(heads, order[:n])
        prune_curve.append({k: evaluate(k, mask) for k in ('omniglot', 'mnist', 'fashion')})
    res = dict(gd=gd_acc, gd_train_seconds=train_secs, theory={str(k): v for k, v in theory.items()},
               U_theory_N=Ns[0], U_theory=Us_best[Ns[0]].tolist(), U_gd=U_gd.tolist(),
               head_scores={f'{l + 1}.{h + 1}': scores[l, h] for l, h in all_heads},
               head_scores_gd={f'{l + 1}.{h + 1}': scores_gd[l, h] for l, h in all_heads},
               prune_drop={f'{l + 1}.{h + 1}': v for (l, h), v in drop.items()},
               prune_order=[f'{l + 1}.{h + 1}' for l, h in order], prune_curve=prune_curve,
               config=dict(n_embd=n_embd, qk_dim=qk_dim, heads=heads, gd_steps=gd_steps, gd_batch=gd_batch,
                           gd_lr=gd_lr, os_P=os_P, n_eval=n_eval, taus=taus, seed=seed))
    save_json(res, os.path.join(out_dir, 'oneshot.json'))
    # --- figures
    names = [f'{a + 1}{b + 1}' for a, b in np.ndindex(*heads)] if len(heads) == 2 else [str(i) for i in range(len(I))]
    fig, ax = plt.subplots(figsize=(4.4, 3.2))
    for k, c in (('omniglot', 'b'), ('mnist', 'g'), ('fashion', 'm')):
        ax.semilogx(Ns, [theory[N][k] for N in Ns], c + '-x', label=f'theory {k}')
        ax.axhline(theory['GP'][k], color=c, ls='--', lw=0.8)
    ax.set_xlabel('N')
    ax.set_ylabel('test accuracy')
    ax.set_title('one-shot episodes (dashed: GP limit)', fontsize=10)
    ax.legend(fontsize=7)
    fig.savefig(os.path.join(out_dir, 'paths_oneshot_accuracy.png'), dpi=110, bbox_inches='tight')
    plt.close(fig)
    plot_U_grid({f'theory N={Ns[0]}': res['U_theory'], 'gradient descent': (U_gd / U_gd.abs().max()).tolist()},
                names, os.path.join(out_dir, 'paths_oneshot_U.png'), 'order parameter, paths (h1 h2)')
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.0))
    labels = [f'{l + 1}.{h + 1}' for l, h in all_heads]
    xs = np.arange(len(all_heads))
    axes[0].bar(xs - 0.2, [scores[lh] for lh in all_heads], 0.4, color='b', label='head score (theory)')
    axes[0].bar(xs + 0.2, [drop[lh]['omniglot'] / max(1e-9, max(v['omniglot'] for v in drop.values()))
                           for lh in all_heads], 0.4, color='r', label='accuracy drop (normalised)')
    axes[0].set_xticks(xs)
    axes[0].set_xticklabels(labels)
    axes[0].set_xlabel('head (layer.head)')
    axes[0].legend(fontsize=7)
    for k, c in (('omniglot', 'b'), ('mnist', 'g'), ('fashion', 'm')):
        axes[1].plot(range(len(prune_curve)), [p[k] for p in prune_curve], c + '.-', label=k)
    axes[1].set_xlabel('heads pruned (lowest score first)')
    axes[1].set_ylabel('accuracy')
    axes[1].legend(fontsize=7)
    fig.savefig(os.path.join(out_dir, 'paths_oneshot_pruning.png'), dpi=110, bbox_inches='tight')
    plt.close(fig)
    # --- tables
    print(f"\n| {'N':>6s} | tau | Omniglot | MNIST | Fashion |")
    for N in ['GP'] + Ns:
        r = theory[N]
        print(f"| {str(N):>6s} | {r['tau']} | {r['omniglot']:.3f} | {r['mnist']:.3f} | {r['fashion']:.3f} |")
    print(f"| GD model | - | {gd_acc['omniglot']:.3f} | {gd_acc['mnist']:.3f} | {gd_acc['fashion']:.3f} |")
    print("\n| head | score (theory) | score (GD weights) | Omniglot drop | MNIST drop | Fashion drop |")
    for l, h in all_heads:
        print(f"| {l + 1}.{h + 1} | {scores[l, h]:.3f} | {scores_gd[l, h]:.3f} | {drop[(l, h)]['omniglot']:+.3f} | "
              f"{drop[(l, h)]['mnist']:+.3f} | {drop[(l, h)]['fashion']:+.3f} |")
    print("\n| pruned | heads | Omniglot | MNIST | Fashion |")
    for n, p in enumerate(prune_curve):
        print(f"| {n} | {','.join(res['prune_order'][:n]) or '-'} | {p['omniglot']:.3f} | {p['mnist']:.3f} | "
              f"{p['fashion']:.3f} |")

# -----------------------------------------------------------------------------
# command line: python bayes_paths.py {hmc,nuts,oneshot} [config.py] [--key=value ...]


def parse_args(argv):
    """Set module globals from [config.py] and --key=value (nanoGPT semantics: the value is a Python literal if it
    parses as one, else a string; an int is accepted for a float). Exits with a one-line message on an unknown key,
    a wrong type, or a missing config file."""
    known = {k: globals()[k] for k in _config_keys}
    for arg in argv:
        if not arg.startswith('--'):
            if not os.path.exists(arg):
                sys.exit(f"config file not found: {arg}")
            cfg = {}
            exec(open(arg).read(), {}, cfg)
            pairs = list(cfg.items())
        else:
            if '=' not in arg:
                sys.exit(f"bad argument {arg!r}: use --key=value")
            key, val = arg[2:].split('=', 1)
            try:
                val = ast.literal_eval(val)
            except (ValueError, SyntaxError):
                pass
            pairs = [(key, val)]
        for key, val in pairs:
            if key not in known:
                sys.exit(f"unknown config key: {key}")
            default = known[key]
            if isinstance(default, float) and isinstance(val, int) and not isinstance(val, bool):
                val = float(val)
            if isinstance(default, str) and not isinstance(val, str):
                val = ','.join(str(v) for v in val) if isinstance(val, (tuple, list)) else str(val)
            if type(val) is not type(default):
                sys.exit(f"--{key} expects {type(default).__name__}, got {val!r}")
            globals()[key] = val


if __name__ == '__main__':
    commands = {'hmc': run_hmc, 'nuts': run_nuts, 'oneshot': run_oneshot}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: python bayes_paths.py {{{','.join(commands)}}} [config.py] [--key=value ...]")
    parse_args(sys.argv[2:])
    torch.manual_seed(seed)
    try:
        commands[sys.argv[1]]()
    except FileNotFoundError as e:
        sys.exit(f"file not found: {e}")
