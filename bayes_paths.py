"""
Attention paths in the Bayesian theory of deep multi-head attention (paper 3: Tiberi, Mignacco, Irie,
Sompolinsky, "Dissecting the interplay of attention paths in a statistical mechanics theory of transformers",
NeurIPS 2024).

The network (App. A; tokens are columns, every prior N(0, 1)) is linear in its value weights Θ = (V0, V^{ℓh}, a)
while its attention Ω^{ℓh} reads the bare input x with fixed query/key weights. Its output is a sum over the
H^L attention paths π = (h_1..h_L) of effective weights times attentioned inputs ξ^π(x) (eqs. 5-7). In the
finite-width limit (N, P → ∞, P/N = α) the posterior mean predictor is kernel regression with the kernel
K = (1/H^L) Σ_ππ' U_ππ' C_ππ' whose order parameter U minimises an action S (eqs. 9-12, App. B); the GP limit
(α → 0) is U = I. This file computes all of it in float64, with the data of the paper's two tasks; the
experiments (hmc, nuts, oneshot, timing) are in experiments/paper3/paths.py:

    python bayes_paths.py CMD [config.py ...] [--key=value ...]   # = python -m experiments.paper3 CMD ...

Where the code follows the authors' code, or a reading of the garbled extracted text, rather than the paper as
printed, its docstring says so and docs/deviations.md gives the details.
"""

import errno
import gzip
import math
import os
import warnings

import numpy as np
import torch
from tqdm import tqdm

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
    """Kernel K(x, x') = (1/|Π|) Σ_ππ' U_ππ' ξ^π(x)·ξ^π'(x')/N0 (paper 3, eq. 10) without forming C: ξU is contracted
    first (P·|Π|²·N0), then one (P, |Π|·N0) × (|Π|·N0, P') matrix product, which is also what its gradient w.r.t. U
    costs. U: (|Π|, |Π|); xi: (P, |Π|, N0), xi2: (P', |Π|, N0) → (P, P')."""
    xi2 = xi if xi2 is None else xi2
    P, n, N0 = xi.shape
    Z = torch.einsum('pad,ab->pbd', xi, U)
    return (Z.reshape(P, n * N0) @ xi2.reshape(xi2.shape[0], n * N0).T) / (n * N0)


def kernel_diag(U, xi):
    """Diagonal K(x, x) of `kernel`. xi: (P, |Π|, N0) → (P,)."""
    return torch.einsum('pad,ab,pbd->p', xi, U, xi) / (xi.shape[1] * xi.shape[2])

# =============================================================================
# 2. Order parameters and the action
# =============================================================================
# U^(ℓ) (ℓ = 1..L) is Π_{k≥ℓ} H_k square, indexed by (h_ℓ..h_L) with h_ℓ outermost; U^(1) = U. A scalar U_a sits on
# top. `heads` is the tuple (H_1..H_L). Paper 3's App. B writes the action for equal H; the per-layer form below
# follows the authors' code and reduces to it (the Fig. 2e network has heads (2, 1)); see docs/deviations.md.


def U_a_closed(UL, H_L):
    """Minimiser of S over the scalar U_a: U_a = (−(H−1) + √((H−1)² + 4 Tr U^(L)))/2, the root of ∂S/∂U_a = 0 for the
    U_a terms of `entropy` (paper 3, eq. 32 as written out in docs/deviations.md). UL: (H_L, H_L) → scalar tensor."""
    return (-(H_L - 1) + torch.sqrt((H_L - 1) ** 2 + 4 * torch.diagonal(UL).sum())) / 2


def partial_trace(U, H):
    """u = Σ_h U_[h,h], the trace over the outermost head index. U: (H·m, H·m) → (m, m)."""
    m = U.shape[0] // H
    return torch.einsum('hahb->ab', U.reshape(H, m, H, m))


def entropy(Us, heads, U_a=None):
    """Entropy part of the action, −Σ_ℓ 𝓛(U^(ℓ) U_ext^(ℓ+1)⁻¹) − 𝓛(U_a) with 𝓛(M) = −Tr M + ln det M, σ = 1
    (paper 3, App. B eqs. 32-33; the extracted text of eq. 32 is garbled, the explicit form below follows the
    authors' code: see docs/deviations.md):
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


class _Energy(torch.autograd.Function):
    """ln det(A) + YᵀA⁻¹Y with A = K + τI, from one Cholesky factor; backward ∂/∂K = A⁻¹ − ααᵀ, α = A⁻¹Y, with A⁻¹ from
    the same factor (cheaper than differentiating through the factorisation)."""

    @staticmethod
    def forward(ctx, K, Y, tau):
        Lc = torch.linalg.cholesky(K + tau * torch.eye(K.shape[0], dtype=K.dtype))
        alpha = torch.cholesky_solve(Y[:, None], Lc)[:, 0]
        ctx.save_for_backward(Lc, alpha)
        return 2 * torch.log(torch.diagonal(Lc)).sum() + Y @ alpha

    @staticmethod
    def backward(ctx, grad):
        Lc, alpha = ctx.saved_tensors
        return grad * (torch.cholesky_inverse(Lc) - torch.outer(alpha, alpha)), None, None


def energy(K, Y, tau, closed_grad=True):
    """Energy term ln det(K + τI) + Yᵀ(K + τI)⁻¹Y (paper 3, eq. 12 times P; nats). K: (P, P) symmetric, Y: (P,)
    → scalar. closed_grad: the gradient w.r.t. K in closed form, (K+τI)⁻¹ − ααᵀ with α = (K+τI)⁻¹Y (False:
    autograd through the Cholesky factorisation; equal to rounding). Raises torch.linalg.LinAlgError if K + τI is
    not positive definite."""
    if closed_grad:
        return _Energy.apply(K, Y, tau)
    Lc = torch.linalg.cholesky(K + tau * torch.eye(K.shape[0], dtype=K.dtype))
    return 2 * torch.log(torch.diagonal(Lc)).sum() + Y @ torch.cholesky_solve(Y[:, None], Lc)[:, 0]


def training_kernel(U, xi_or_C):
    """K(U) on the training set from attentioned inputs xi (P, |Π|, N0), contracted without forming C (`kernel`), or
    from precomputed path kernels C (P, P, |Π|, |Π|) (`kernel_from_C`). → (P, P)."""
    return kernel_from_C(U, xi_or_C) if xi_or_C.dim() == 4 else kernel(U, xi_or_C)


def action(Us, xi, Y, N, tau, heads, U_a=None, with_energy=True):
    """Action S = entropy + (1/N)[ln det(K(U)+τI) + Yᵀ(K(U)+τI)⁻¹Y] (paper 3, eqs. 11-12 and 32).
    Us: [U^(1), .., U^(L)]; xi: (P, |Π|, N0) attentioned inputs of the training set (or its path kernels C,
    (P, P, |Π|, |Π|): same value); Y: (P,); N: width. → scalar."""
    S = entropy(Us, heads, U_a)
    if with_energy:
        S = S + energy(training_kernel(Us[0], xi), Y, tau) / N
    return S


def gp_order_parameters(heads, dtype=DTYPE):
    """The GP limit U^(ℓ) = I, U_a = 1 (paper 3, §3.2). heads: (H_1..H_L) → [U^(1), .., U^(L)]."""
    return [torch.eye(int(np.prod(heads[l:])), dtype=dtype) for l in range(len(heads))]


OPTIMIZERS = ('adam', 'lbfgs')   # minimise_action's optimisers


def minimise_action(xi, Y, N, tau, heads, lr=0.1, tol=1e-5, max_iters=20000, with_energy=True, init=None,
                    progress=False, optimizer='adam'):
    """Minimise S over symmetric positive definite U^(ℓ) (U_a in closed form) from the GP point (paper 3, App. E).
    U^(ℓ) = L_ℓ L_ℓᵀ with L_ℓ lower triangular (Cholesky parametrisation keeps U positive definite); stops when the
    largest gradient entry w.r.t. the factors is below `tol` or after `max_iters` steps. optimizer 'adam': Adam at
    learning rate `lr`, halved when S has not improved for 200 steps (as the authors); 'lbfgs': L-BFGS with a
    strong-Wolfe line search (the same minimiser in about a fifth of the gradient evaluations; `lr` unused), which
    hands over to Adam from where it stopped if it ends above `tol`. init: [U^(1), .., U^(L)] to start from (None:
    the GP point). xi: (P, |Π|, N0) attentioned inputs (or the path kernels C, (P, P, |Π|, |Π|)), Y: (P,).
    → (Us, U_a, info) with info = {'steps' (gradient evaluations), 'max_grad', 'S'}. Raises ValueError for an
    unknown optimizer."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    init = gp_order_parameters(heads, xi.dtype) if init is None else init
    Ls = [torch.linalg.cholesky(U).clone().requires_grad_(True) for U in init]
    factors = lambda: [torch.tril(Lf) @ torch.tril(Lf).T for Lf in Ls]
    steps = 0
    if optimizer == 'lbfgs':
        opt = torch.optim.LBFGS(Ls, lr=1, max_iter=max_iters, max_eval=max_iters, tolerance_grad=tol,
                                tolerance_change=0, history_size=50, line_search_fn='strong_wolfe')

        def closure():
            nonlocal steps
            steps += 1
            opt.zero_grad()
            S = action(factors(), xi, Y, N, tau, heads, with_energy=with_energy)
            S.backward()
            for Lf in Ls:
                Lf.grad = torch.tril(Lf.grad)
            return S
        opt.step(closure)
        S = closure()
        g = max(Lf.grad.abs().max().item() for Lf in Ls)
        if g < tol or not math.isfinite(S.item()):
            with torch.no_grad():
                Us = factors()
            return Us, U_a_closed(Us[-1], heads[-1]), {'steps': steps, 'max_grad': g, 'S': S.item()}
    opt = torch.optim.Adam(Ls, lr=lr)
    best, since, g = float('inf'), 0, float('inf')
    it = range(max_iters)
    for step in (tqdm(it, desc=f'S(U) N={N}', leave=False) if progress else it):
        S = action(factors(), xi, Y, N, tau, heads, with_energy=with_energy)
        opt.zero_grad()
        S.backward()
        steps += 1
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
        Us = factors()
        U_a = U_a_closed(Us[-1], heads[-1])
    return Us, U_a, {'steps': steps, 'max_grad': g, 'S': S.item()}

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
    largest score (paper 3, §4.2; which pairs the garbled sum runs over is read as in docs/deviations.md).
    U: (|Π|, |Π|) → (L, max H) array (NaN where a layer has fewer heads)."""
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


DENOISE_HEADS = ('random', 'uniform')   # layer-1 head 2 of the HMC network


def hmc_heads(N0, T, beta, gen, denoise_head='random'):
    """Designed query-key matrices W = β·blockdiag(W_ff, W_pp) (+ random cross blocks) for L = 2, H = 2
    (paper 3, App. G.2; the W_pp entries are read from garbled text, see docs/deviations.md). Layer 1 head 0 "good":
    W_ff = q qᵀ, q = (v_+ − v_−)/N0, W_pp[s, s+1] = 1 (s ≥ 1), W_pp[0, t≥1] = 3/2; layer 2 head 0: W_pp = all ones
    (uniform); head 1 of each layer random (App. G.2.2), or with denoise_head='uniform' layer 1's head 1 W = 0,
    uniform attention (App. G.2.2, Fig. 5c; the authors' 2paths script), drawn all the same so that the other heads
    do not change. gen: torch.Generator. → [W1, W2], each (2, D, D) float64,
    D = N0 + T + 1."""
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
    layer1 = [good1, random_head()]
    if denoise_head == 'uniform':
        layer1[1] = torch.zeros(D, D, dtype=DTYPE)
    elif denoise_head != 'random':
        raise ValueError(f"denoise_head must be one of {DENOISE_HEADS}, got {denoise_head!r}")
    return [beta * torch.stack(layer1), beta * torch.stack([good2, random_head()])]


HMC_PATHS = ['good', 'adv-1', 'denoise', 'adv-2']   # (h1, h2) = (0,0), (0,1), (1,0), (1,1); head 0 = designed


def hmc_setup(n_train, n_test, seed, T=30, N0=200, sigma_par=1.0, sigma_perp=1.0, beta=10.0, readout='last',
              denoise_head='random'):
    """Data, heads and attentioned inputs of the HMC experiment (paper 3, App. G). The readout token is the last
    (App. G.2 says the first; the authors' code reads the last: see docs/deviations.md). → dict with xi_tr (P, 4, D),
    y_tr (P,), xi_te (P*, 4, D), y_te (P*,), D = N0 + T + 1, and sub-networks 'all' (heads (2,2)), 'good' ((1,1)),
    'good+denoise' ((2,1)) as (path indices, heads); denoise_head as in `hmc_heads`."""
    gen = torch.Generator().manual_seed(seed)
    Ws = hmc_heads(N0, T, beta, gen, denoise_head)
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

    sampler = NUTS(model, max_tree_depth=max_tree_depth, target_accept_prob=0.8, jit_compile=jit,
                   ignore_jit_warnings=True)
    mcmc = MCMC(sampler, num_samples=samples, warmup_steps=warmup, disable_progbar=not progress)
    with warnings.catch_warnings():   # jit_compile traces the potential with the deprecated torch.jit.trace
        warnings.filterwarnings('ignore', message='`torch.jit.trace` is deprecated', category=DeprecationWarning)
        mcmc.run()
    return {k: v.detach() for k, v in mcmc.get_samples().items()}

# =============================================================================
# 6. One-shot image classification (App. H)
# =============================================================================
# Omniglot: the official data is github.com/brendenlake/omniglot (python/images_background.zip, images_evaluation.zip);
# we read numpy arrays built from those zips: `images` bool (n_chars, 20, 105, 105), True = background.
# MNIST / FashionMNIST: the standard t10k idx gz files.

PATCH = 8      # 8×8 patches of a 32×32 image → 16 tokens per image, T = 48 per episode, token dimension N0 = 64


def image_tokens(imgs):
    """Patch tokens of images (paper 3, §4.2): resize to 32×32 (area average), ink = 1, cut into 8×8 patches,
    LayerNorm each patch (no affine). imgs: (n, h, w) float in [0, 1], ink high → (n, 16, 64) float32."""
    x = torch.nn.functional.interpolate(imgs[:, None].float(), size=(32, 32), mode='area')[:, 0]
    x = x.unfold(1, PATCH, PATCH).unfold(2, PATCH, PATCH).reshape(len(imgs), -1, PATCH * PATCH)
    return torch.nn.functional.layer_norm(x, (PATCH * PATCH,))


def missing_file(path):
    """FileNotFoundError for path, with path as its `filename`."""
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


def load_omniglot(path):
    """Omniglot arrays (an .npz with `images` bool (n_chars, 20, 105, 105), True = background) → (tokens
    (n_chars·20, 16, 64) float32, labels (n_chars·20,) int64). Raises FileNotFoundError naming path."""
    if not os.path.exists(path):
        raise missing_file(path)
    d = np.load(path)
    imgs = torch.from_numpy(~d['images']).float()                 # ink = 1
    n_chars, n_draw = imgs.shape[:2]
    toks = torch.cat([image_tokens(chunk) for chunk in imgs.reshape(-1, *imgs.shape[2:]).split(2000)])
    return toks, torch.arange(n_chars).repeat_interleave(n_draw)


def load_idx(folder):
    """MNIST-format test set (folder/t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz) → (tokens (n, 16, 64)
    float32, labels (n,) int64). Raises FileNotFoundError naming the first missing file."""
    pi, pl = os.path.join(folder, 't10k-images-idx3-ubyte.gz'), os.path.join(folder, 't10k-labels-idx1-ubyte.gz')
    for p in (pi, pl):
        if not os.path.exists(p):
            raise missing_file(p)
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
    """2-way 1-shot episodes [support_a (+), support_b (−), query (?)] (paper 3, §4.2, App. H): two distinct classes,
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


def pair_episodes(tokens, labels, classes=(0, 1)):
    """Out-of-distribution episodes as the authors' icl_utils.py builds them: every image of the two classes is a
    query once (class c0's images first, then c1's, in file order), with one support of each class in a fixed
    order, c0's support first. The authors draw the i-th query's supports from the training split (image i of
    each class); this reads only the t10k test split, so they are the test images (i+1) mod n_c of class c, moved
    on by one where that would be the query itself. Label convention as in `episodes`: the first support is "+",
    y = +1 for c0's queries. tokens: (M, 16, d), labels: (M,) with ≥ 2 images per class. → x: (n0+n1, 48, d)
    float32, y: (n0+n1,) in {+1, −1}. Raises ValueError if a class has fewer than 2 images."""
    idx = [torch.nonzero(labels == c)[:, 0] for c in classes]
    if min(len(i) for i in idx) < 2:
        raise ValueError(f"classes {classes} need at least 2 images each, got {[len(i) for i in idx]}")
    q = torch.cat(idx)
    cls = torch.cat([torch.full((len(i),), k) for k, i in enumerate(idx)])
    within = torch.cat([torch.arange(len(i)) for i in idx])                       # index of the query in its class
    n = torch.arange(len(q))
    sup = []
    for k, i in enumerate(idx):
        j = (n + 1) % len(i)
        j = torch.where((cls == k) & (j == within), (j + 1) % len(i), j)
        sup.append(i[j])
    d = tokens.shape[-1]
    lab = label_vectors(d)
    x = torch.cat([tokens[sup[0]] + lab[0], tokens[sup[1]] + lab[1], tokens[q] + lab[2]], 1)
    return x + position_code(x.shape[1], d), torch.where(cls == 0, 1.0, -1.0)


PARAMS = ('torch', 'ntk')   # PathsNet parametrisations


class PathsNet(torch.nn.Module):
    """The gradient-descent model of paper 3 (eqs. 1-4): linear input V0 to width N, L layers of H heads whose
    attention reads the bare input (Q, K: (H, G, N0), score (K x_s)·(Q x_t)/√G), value weights V^{ℓh}, the head sum
    scaled by 1/√H, no residual, no MLP, mean-pool readout a. x: (B, T, N0) → f: (B,).

    param='torch' is the authors' code (my_vit.py): every weight is an nn.Linear(bias=False) weight with PyTorch's
    default init U(−1/√fan_in, 1/√fan_in) and enters the forward pass as it is (W_in x, W_v z, w_a·z̄). param='ntk'
    draws every value weight N(0, 1) and applies the explicit 1/√fan_in of eqs. 1-4 (Q, K stay N(0, 1/N0)). The two
    compute the same function of `weights()`, the value weights in the paper's units (a torch weight times
    √fan_in), so eq. 13 applies to either; under Adam they train differently, since a weight stored c times
    smaller moves c times further per step in the paper's units (docs/deviations.md#one-shot-model).
    Computed in path form (eq. 5), which equals the layer form; `path_mask` (|Π|,) scales the paths (zero through
    pruned heads). Raises ValueError for an unknown param."""

    def __init__(self, N0, N, G, heads, param='torch'):
        super().__init__()
        if param not in PARAMS:
            raise ValueError(f"param must be one of {PARAMS}, got {param!r}")
        self.heads, self.param = tuple(heads), param
        if param == 'ntk':
            draw = lambda shape, fan_in: torch.randn(*shape)
            self.gains = (1.0, 1.0, 1.0)
        else:
            draw = lambda shape, fan_in: torch.empty(*shape).uniform_(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
            self.gains = (math.sqrt(N0), math.sqrt(N), math.sqrt(N))            # V0, V^{ℓh}, a
        qk = ((lambda shape: torch.randn(*shape) / math.sqrt(N0)) if param == 'ntk' else
              (lambda shape: draw(shape, N0)))
        self.V0 = torch.nn.Parameter(draw((N, N0), N0))
        self.Vs = torch.nn.ParameterList([torch.nn.Parameter(draw((H, N, N), N)) for H in heads])
        self.a = torch.nn.Parameter(draw((N,), N))
        self.Q = torch.nn.ParameterList([torch.nn.Parameter(qk((H, G, N0))) for H in heads])
        self.K = torch.nn.ParameterList([torch.nn.Parameter(qk((H, G, N0))) for H in heads])

    def weights(self):
        """The value weights in the paper's units (prior N(0, 1) scale, the 1/√fan_in outside): (V0 (N, N0),
        [V^{ℓ} (H_ℓ, N, N)], a (N,)), differentiable."""
        g0, gv, ga = self.gains
        return self.V0 * g0, [V * gv for V in self.Vs], self.a * ga

    def omegas(self, x):
        return [attention_QK(x, Q, K) for Q, K in zip(self.Q, self.K)]

    def path_inputs(self, x):
        """Attentioned inputs ξ^π (eq. 7, mean readout) of x: (B, T, N0) through this model's attention
        → (B, |Π|, N0)."""
        return attentioned_inputs(x, self.omegas(x), 'mean')

    def from_paths(self, xi, path_mask=None):
        """Output f (eq. 5) from attentioned inputs xi: (B, |Π|, N0), paths weighted by path_mask (|Π|,) → (B,)."""
        if path_mask is not None:
            xi = xi * path_mask[None, :, None]
        V0, Vs, a = self.weights()
        return network_output(xi, V0, a, Vs)

    def forward(self, x, path_mask=None):
        return self.from_paths(self.path_inputs(x), path_mask)


def head_path_mask(heads, pruned, rescale=True):
    """Path weights (h_1..h_L) after pruning heads: 0 for every path through a pruned head. With rescale (the authors'
    pruning, my_vit.py drop_heads) the head sum of a layer with k of its H heads pruned is scaled by 1/√(H−k)
    instead of 1/√H, so every kept path is multiplied by Π_ℓ √(H_ℓ/(H_ℓ−k_ℓ)); a layer with every head pruned
    zeroes all paths. heads: (H_1..H_L); pruned: iterable of distinct (ℓ, h). → (|Π|,) float32."""
    paths = np.array(np.unravel_index(np.arange(int(np.prod(heads))), heads)).T
    keep = np.ones(len(paths), bool)
    gain = 1.0
    for l, H in enumerate(heads):
        gone = {h for ll, h in pruned if ll == l}
        for h in gone:
            keep &= paths[:, l] != h
        if rescale and len(gone) < H:
            gain *= math.sqrt(H / (H - len(gone)))
    return torch.from_numpy(keep.astype(np.float32) * np.float32(gain))

# =============================================================================


if __name__ == '__main__':        # the experiments' commands: experiments/paper3 (python -m experiments.paper3 CMD)
    import runpy
    runpy.run_module('experiments.paper3', run_name='__main__', alter_sys=True)
