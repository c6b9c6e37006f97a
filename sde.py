"""
MixiT's covariance SDE (paper 1, Theorem 2.1 and App. A), and three checks against finite networks.

The non-causal MixiT recursion at initialisation, width n, sequence length m (paper 1, eq. 2.3 in the form
of App. A, eq. A.4; eq. 2.3's printed variance of W is read as in docs/deviations.md):

    h_{l+1} = W^V_l h_l (I_m + (W_l - Wbar_l) / sqrt(n m)),   W^V ~ N(0, 1/n) (n x n),  W ~ N(0, 1) (m x m)

with Wbar_l the column means of W_l repeated down each column (so every column of the mixing matrix sums
to 1). The token covariance Phi_l = h_l^T h_l / n (m x m) is a Markov chain. As n, d -> inf with
d/n -> tau_bar, its upper triangle (a vector of p = m(m+1)/2 entries) follows (eqs. A.1-A.2)

    dPhi = (Tr Phi/m - M(Phi)) I_m dtau + [Sigma_V(Phi) + Sigma_M(Phi)]^{1/2} dB,    M(Phi) = mean of Phi

    Sigma_V[ab,gd] = Phi_ag Phi_bd + Phi_ad Phi_bg
    Sigma_M[ab,gd] = d_ag C(Phi_.b, Phi_.d) + d_ad C(Phi_.b, Phi_.g) + d_bg C(Phi_.d, Phi_.a) + d_bd C(Phi_.a, Phi_.g)
    C(u, v) = <u, v>/m - mean(u) mean(v)                       (Phi_.b is column b of Phi)

The drift acts on the diagonal only (eq. A.7 prints I_n; the m x m identity is meant: see docs/deviations.md);
it is zero when all entries of Phi are equal (perfectly correlated, equal-norm tokens) and positive otherwise,
which keeps the tokens from collapsing onto one direction.

    python sde.py check [--key=value ...]        # python sde.py check --help lists the keys
    python sde.py covariance out/cpu/table6_mixit/ckpt.pt   # Table 6: trained and initial token covariance

runs three checks of Theorem 2.1: (a) one layer from a given Phi, Monte Carlo mean of n*dPhi against the
drift, and covariance of sqrt(n)*dPhi (= covariance of n*dPhi, over n) against Sigma_V + Sigma_M, as
z-scores; (b) the law of the token correlation, of Tr Phi/m and of log(lambda_min/Tr Phi) at depth
d = tau_bar*n from the width-n chain against Euler paths of the SDE, with a Kolmogorov-Smirnov distance that
should shrink as n grows; (c) token correlation against depth for attention-only stacks with standard
softmax attention versus MixiT (rank collapse for one, not the other). Results go to out_dir/results.json
and PNGs; a table is printed last; the exit status is 1 when a check fails.
"""
import json
import math
import os
import sys
import time

import torch
from tqdm import tqdm

from configurator import at_least, fail, run_command
from files import output_file, output_folder
from memory import memory_shortfall

# -----------------------------------------------------------------------------

# The "given Phi" of checks (a) and (b): m = 4 tokens, unequal norms, unequal positive correlations.
PHI0 = torch.tensor([[1.00, 0.50, 0.30, 0.20],
                     [0.50, 1.20, 0.40, 0.10],
                     [0.30, 0.40, 0.90, 0.35],
                     [0.20, 0.10, 0.35, 1.10]], dtype=torch.float64)

# -----------------------------------------------------------------------------
# Phi as a vector: the upper triangle, row by row (alpha <= beta), p = m(m+1)/2 entries

def _m_of(p):
    m = int(round((math.sqrt(8 * p + 1) - 1) / 2))
    if m * (m + 1) // 2 != p:
        raise ValueError(f"a vector of {p} entries is not the upper triangle of a square matrix")
    return m

def vec(Phi):
    """Upper triangle of Phi, row by row. Phi: (..., m, m) -> (..., m(m+1)/2)."""
    a, b = torch.triu_indices(Phi.shape[-1], Phi.shape[-1])
    return Phi[..., a, b]

def unvec(phi):
    """Inverse of vec: (..., p) -> symmetric (..., m, m). Raises ValueError if p is not m(m+1)/2."""
    m = _m_of(phi.shape[-1])
    a, b = torch.triu_indices(m, m)
    Phi = phi.new_zeros(*phi.shape[:-1], m, m)
    Phi[..., a, b] = phi
    Phi[..., b, a] = phi
    return Phi

# -----------------------------------------------------------------------------
# the SDE's coefficients (paper 1, eqs. A.1-A.2)

def drift(phi):
    """Drift (Tr Phi/m - M(Phi)) I_m of eq. A.1, per unit tau, on the upper triangle (eq. A.7 prints I_n for
    the m x m identity: see docs/deviations.md).
    phi: (..., p) -> (..., p); nonzero on the diagonal entries only. The expected change of Phi in one
    layer of width n is drift/n (exactly: eq. A.6, and W^V leaves the mean unchanged)."""
    Phi = unvec(phi)
    m = Phi.shape[-1]
    g = Phi.diagonal(dim1=-2, dim2=-1).mean(-1) - Phi.mean((-2, -1))   # Tr Phi/m - M(Phi)
    return vec(g[..., None, None] * torch.eye(m, dtype=phi.dtype))

def Sigma_V(phi):
    """Diffusion of the W^V (linear network) part, Sigma_V[ab,gd] = Phi_ag Phi_bd + Phi_ad Phi_bg
    (eq. A.3, Li et al. 2022). phi: (..., p) -> (..., p, p), rows and columns indexed like vec."""
    Phi = unvec(phi)
    a, b = torch.triu_indices(Phi.shape[-1], Phi.shape[-1])
    A, B = a[:, None], b[:, None]
    G, D = a[None, :], b[None, :]
    return Phi[..., A, G] * Phi[..., B, D] + Phi[..., A, D] * Phi[..., B, G]

def Sigma_M(phi):
    """Diffusion of the random mixing part, eq. A.2/A.12:
    Sigma_M[ab,gd] = d_ag C_bd + d_ad C_bg + d_bg C_da + d_bd C_ag with C_uv = C(Phi_.u, Phi_.v) the
    (biased) covariance over positions of columns u and v. phi: (..., p) -> (..., p, p)."""
    Phi = unvec(phi)
    m = Phi.shape[-1]
    col_mean = Phi.mean(-2)                                              # (..., m)
    C = Phi.mT @ Phi / m - col_mean[..., :, None] * col_mean[..., None, :]
    a, b = torch.triu_indices(m, m)
    A, B = a[:, None], b[:, None]
    G, D = a[None, :], b[None, :]
    d = lambda i, j: (i == j).to(phi.dtype)
    return d(A, G) * C[..., B, D] + d(A, D) * C[..., B, G] + d(B, G) * C[..., D, A] + d(B, D) * C[..., A, G]

# -----------------------------------------------------------------------------
# the finite network

def _mm(X, Y):
    """Batched product of small matrices; einsum is several times faster than bmm for 4 x 4 on CPU."""
    return torch.einsum('...ij,...jk->...ik', X, Y)

def mixing(W, n):
    """MixiT's non-causal mixing matrix I_m + (W - Wbar)/sqrt(n m) (paper 1, eq. 2.3 as in App. A, eq. A.4;
    eq. 2.3 prints the variance of W as 1/sqrt(n m), eq. A.4 scales N(0, 1) by 1/sqrt(n m): see docs/deviations.md).
    W: (..., m, m) standard normal -> (..., m, m), each column summing to 1."""
    m = W.shape[-1]
    return torch.eye(m, dtype=W.dtype) + (W - W.mean(-2, keepdim=True)) / math.sqrt(n * m)

def mixit_layer(h, W_V, W):
    """One MixiT layer h -> W^V h (I + (W - Wbar)/sqrt(n m)). h: (..., n, m) tokens as columns,
    W_V: (..., n, n) ~ N(0, 1/n), W: (..., m, m) ~ N(0, 1). Returns (..., n, m)."""
    return W_V @ h @ mixing(W, h.shape[-2])

def bartlett(n, m, shape, dtype=torch.float64):
    """Upper-triangular T with T^T T ~ Wishart(I_m, n)/n (Bartlett decomposition):
    T_ii = sqrt(chi2_{n-i}/n) (i = 0..m-1), T_ij ~ N(0, 1/n) for i < j. Returns (*shape, m, m).
    Raises ValueError if n < m."""
    if n < m:
        raise ValueError(f"width n={n} must be at least the sequence length m={m}")
    k = torch.arange(n, n - m, -1, dtype=dtype).expand(*shape, m)
    chi2 = 2 * torch.distributions.Gamma(k / 2, torch.ones_like(k)).sample()
    T = torch.randn(*shape, m, m, dtype=dtype).triu(1)
    return (T + torch.diag_embed(chi2.sqrt())) / math.sqrt(n)

def mixit_chain(Phi0, n, depth, draws, record, seed=0, progress=False):
    """Phi_l of the width-n non-causal MixiT network (paper 1, eq. 2.3) at the layers in `record`, for `draws`
    independent networks started from h_0 with h_0^T h_0 / n = Phi0.

    Exact in law at O(m^3) per layer, whatever n: write h = Q R (Q: n x m orthonormal). W^V Q has
    i.i.d. N(0, 1/n) entries (W^V is rotation invariant), so W^V h = Z R with Z ~ N(0, 1/n) (n x m), and
    Z = Q' T with T the Bartlett factor above. Keeping S = R/sqrt(n) (so Phi = S^T S), one layer is
        S <- T S (I + (W - Wbar)/sqrt(n m)).
    Phi0: (m, m) positive definite; returns (len(record), draws, m, m) float64. Raises ValueError if n < m."""
    m = Phi0.shape[-1]
    out = {}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        S = torch.linalg.cholesky(Phi0.double()).mT.expand(draws, m, m).clone()
        for l in tqdm(range(depth + 1), desc=f'chain n={n}', leave=False, disable=not progress):
            if l in record:
                out[l] = S.mT @ S
            if l < depth:
                S = _mm(_mm(bartlett(n, m, (draws,)), S), mixing(torch.randn(draws, m, m, dtype=torch.float64), n))
    return torch.stack([out[l] for l in record])

# -----------------------------------------------------------------------------
# Euler-Maruyama paths of the SDE

def _sqrt_psd(Sigma):
    """A square root L with L L^T = Sigma: Cholesky, or the eigen-square-root (negative eigenvalues
    clipped to 0) for the matrices where Cholesky fails. Sigma: (B, p, p)."""
    L, info = torch.linalg.cholesky_ex(Sigma)
    bad = info > 0
    if bad.any():
        lam, U = torch.linalg.eigh(Sigma[bad])
        L[bad] = U * lam.clamp(min=0).sqrt()[..., None, :]
    return L

def project_psd(Phi):
    """Nearest symmetric PSD matrix in Frobenius norm: eigenvalues clipped at 0. Phi: (B, m, m).
    Only the matrices that fail a Cholesky test are touched. Returns (Phi, number clipped)."""
    Phi = (Phi + Phi.mT) / 2
    bad = torch.linalg.cholesky_ex(Phi)[1] > 0
    if bad.any():
        lam, U = torch.linalg.eigh(Phi[bad])
        Phi[bad] = (U * lam.clamp(min=0)[..., None, :]) @ U.mT
    return Phi, int(bad.sum())

def sqrt_step(S, dtau):
    """One step of the square-root scheme: S <- T S A with Phi = S^T S, where, for Z, W ~ N(0, 1) (m x m),
        T = (1 - dtau m/4) (I + sqrt(dtau/2) Z),      A = I + sqrt(dtau/m) (W - Wbar).
    The increment of Phi = S^T S then has mean drift(Phi) dtau + O(dtau^2) (E[T^T T] = I + O(dtau^2), and
    A's quadratic term gives the drift as in eq. A.6) and covariance (Sigma_V + Sigma_M)(Phi) dtau
    + O(dtau^2) (T^T T - I = sqrt(dtau) (Z + Z^T)/sqrt(2) + ..., A as in eq. A.8): an Euler step of eq. A.1
    whose Phi stays symmetric PSD by construction. It is the width-n chain with n = 1/dtau and Gaussian
    noise in place of the Bartlett factor. S: (B, m, m) -> (B, m, m)."""
    B, m, _ = S.shape
    I = torch.eye(m, dtype=S.dtype)
    Z, W = torch.randn(2, B, m, m, dtype=S.dtype).unbind(0)
    T = (1 - dtau * m / 4) * (I + math.sqrt(dtau / 2) * Z)
    A = I + math.sqrt(dtau / m) * (W - W.mean(-2, keepdim=True))
    return _mm(_mm(T, S), A)

def em_step(phi, dtau):
    """One literal Euler-Maruyama step of eq. A.1 on the upper triangle,
        phi <- phi + drift(phi) dtau + [Sigma_V + Sigma_M]^{1/2}(phi) xi sqrt(dtau),   xi ~ N(0, I_p),
    the square root by Cholesky (eigen-root where that fails), then Phi projected back onto the PSD cone
    (project_psd). phi: (B, p) -> ((B, p), number of matrices clipped)."""
    L = _sqrt_psd(Sigma_V(phi) + Sigma_M(phi))
    xi = torch.randn(*phi.shape, 1, dtype=phi.dtype)
    phi = phi + drift(phi) * dtau + (L @ xi).squeeze(-1) * math.sqrt(dtau)
    Phi, c = project_psd(unvec(phi))
    return vec(Phi), c

def sde_paths(Phi0, tau, draws, steps_per_unit=1024, record=None, scheme='sqrt', seed=0, progress=False):
    """Paths of the SDE eq. A.1 from Phi0, with step dtau = 1/steps_per_unit, by one of two Euler schemes
    that both keep Phi symmetric PSD:
      'sqrt' (default): sqrt_step on a square root S of Phi = S^T S, PSD by construction;
      'em': the literal Euler-Maruyama step em_step, with [Sigma_V + Sigma_M]^{1/2} and the negative
            eigenvalues of the symmetric matrix clipped to 0 after each step.
    Phi gets close to singular (in the width-n chain, lambda_min/Tr Phi has median ~4e-4 at tau = 1 from
    PHI0), where 'em' needs the clipping often and is biased at practical steps; 'sqrt' is not.
    Phi0: (m, m) positive definite; record: times to return (default [tau]).
    Returns (Phi at the recorded times (len(record), draws, m, m) float64, number of steps at which
    'em' clipped some path; 0 for 'sqrt'). Raises ValueError for an unknown scheme."""
    if scheme not in ('sqrt', 'em'):
        raise ValueError(f"scheme must be 'sqrt' or 'em', not {scheme!r}")
    record = [tau] if record is None else list(record)
    dtau = 1 / steps_per_unit
    K = int(round(tau * steps_per_unit))
    at = {int(round(t * steps_per_unit)): t for t in record}
    out, clipped = {}, 0
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        S = torch.linalg.cholesky(Phi0.double()).mT.expand(draws, -1, -1).clone()
        phi = vec(Phi0.double()).expand(draws, -1).clone()
        for k in tqdm(range(K + 1), desc=f'SDE paths ({scheme})', leave=False, disable=not progress):
            if k in at:
                out[at[k]] = S.mT @ S if scheme == 'sqrt' else unvec(phi)
            if k == K:
                break
            if scheme == 'sqrt':
                S = sqrt_step(S, dtau)
            else:
                phi, c = em_step(phi, dtau)
                clipped += c > 0
    return torch.stack([out[t] for t in record]), clipped

# -----------------------------------------------------------------------------
# statistics

def token_corr(Phi, a=0, b=1):
    """Correlation Phi_ab / sqrt(Phi_aa Phi_bb) of tokens a and b. Phi: (..., m, m) -> (...)."""
    return Phi[..., a, b] / (Phi[..., a, a] * Phi[..., b, b]).sqrt()

def mean_offdiag_corr(Phi):
    """Mean over token pairs a < b of their correlation. Phi: (..., m, m) -> (...)."""
    d = Phi.diagonal(dim1=-2, dim2=-1).sqrt()
    R = Phi / (d[..., :, None] * d[..., None, :])
    a, b = torch.triu_indices(Phi.shape[-1], Phi.shape[-1], 1)
    return R[..., a, b].mean(-1)

def ks_2samp(x, y):
    """Two-sample Kolmogorov-Smirnov statistic sup_t |F_x(t) - F_y(t)|. x: (N,), y: (M,) -> float."""
    x, y = x.double().sort().values, y.double().sort().values
    t = torch.cat([x, y])
    Fx = torch.searchsorted(x, t, right=True) / len(x)
    Fy = torch.searchsorted(y, t, right=True) / len(y)
    return float((Fx - Fy).abs().max())

def ks_critical(N, M, alpha):
    """Asymptotic two-sample KS critical value at level alpha: sqrt(-ln(alpha/2)/2 * (N+M)/(N M))."""
    return math.sqrt(-math.log(alpha / 2) / 2 * (N + M) / (N * M))

# -----------------------------------------------------------------------------
# check (a): one layer, Monte Carlo over W^V and W

def one_step_samples(Phi, n, samples, seed=0, chunk=10_000):
    """n * (vec(Phi_1) - vec(Phi)) for `samples` independent MixiT layers of width n applied to an h with
    h^T h / n = Phi. Phi: (m, m) positive definite -> (samples, p) float64.
    h = sqrt(n) [U; 0] with U^T U = Phi (any such h has the same law, W^V being rotation invariant), so
    W^V h = sqrt(n) W^V[:, :m] U: only the first m columns of W^V meet nonzero rows of h."""
    m = Phi.shape[-1]
    U = torch.linalg.cholesky(Phi.double()).mT
    out = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for s in range(0, samples, chunk):
            c = min(chunk, samples - s)
            WV_h = torch.randn(c, n, m, dtype=torch.float64) @ U          # W^V[:, :m] ~ N(0, 1/n), times sqrt(n) U
            h1 = WV_h @ mixing(torch.randn(c, m, m, dtype=torch.float64), n)
            out.append(n * (vec(h1.mT @ h1 / n) - vec(Phi.double())))
    return torch.cat(out)

def moment_zscores(X, mu, Sigma, n):
    """z-scores of the sample mean of X = n dPhi (N, p) against mu = drift (p,), and of the sample
    covariance of X / sqrt(n) = sqrt(n) dPhi against Sigma = Sigma_V + Sigma_M (p, p): a layer moves Phi
    by drift/n on average with covariance Sigma/n, so Cov(n dPhi) = n Sigma. Covariance entries i <= j;
    the standard error of each is the sample std of (Y_i - mean)(Y_j - mean) over sqrt(N).
    Returns (z_mean (p,), z_cov (p(p+1)/2,), mean of X, covariance of X / sqrt(n))."""
    N = X.shape[0]
    mean = X.mean(0)
    z_mean = (mean - mu) / (X.std(0) / math.sqrt(N))
    Y = (X - mean) / math.sqrt(n)
    cov = Y.T @ Y / (N - 1)
    i, j = torch.triu_indices(X.shape[1], X.shape[1])
    prod = Y[:, i] * Y[:, j]
    z_cov = (cov[i, j] - Sigma[i, j]) / (prod.std(0) / math.sqrt(N))
    return z_mean, z_cov, mean, cov

# -----------------------------------------------------------------------------
# check (c): attention-only stacks, no residual, no norm, non-causal

def softmax_layer(h, W_Q, W_K, W_V):
    """Standard single-head softmax attention, h -> W^V h softmax_keys(K^T Q / sqrt(n)) (paper 1, eq. 2.1
    with n_h = n). h: (..., n, m) tokens as columns; W_*: (..., n, n). Returns (..., n, m)."""
    n = h.shape[-2]
    Q, K = W_Q @ h, W_K @ h
    P = torch.softmax(K.mT @ Q / math.sqrt(n), dim=-2)    # column j: weights of keys i for query j
    return W_V @ h @ P

def collapse_curves(n, m, depth, draws, seed=0, progress=False):
    """Mean token correlation (mean_offdiag_corr) against layer, for `draws` networks started from
    h_0 ~ N(0, 1) (n x m), for three stacks: softmax with W ~ N(0, 1/n), softmax with W ~ N(0, 0.02^2)
    (model.py's init), MixiT (paper scaling). Returns {name: (depth+1, draws) float64}."""
    stds = {'softmax, W~N(0,1/n)': 1 / math.sqrt(n), 'softmax, W~N(0,0.02^2)': 0.02}
    curves = {}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        h0 = torch.randn(draws, n, m, dtype=torch.float64)
        for name, std in list(stds.items()) + [('MixiT', None)]:
            h, rho = h0, [mean_offdiag_corr(h0.mT @ h0)]
            for _ in tqdm(range(depth), desc=name, leave=False, disable=not progress):
                W_V = torch.randn(draws, n, n, dtype=torch.float64) / math.sqrt(n)
                if std is None:
                    h = mixit_layer(h, W_V, torch.randn(draws, m, m, dtype=torch.float64))
                else:
                    W_Q, W_K = (torch.randn(2, draws, n, n, dtype=torch.float64) * std).unbind(0)
                    h = softmax_layer(h, W_Q, W_K, W_V * std * math.sqrt(n))
                h = h / h.norm(dim=(-2, -1), keepdim=True) * math.sqrt(n * m)   # scale only: no effect on correlations
                rho.append(mean_offdiag_corr(h.mT @ h))
            curves[name] = torch.stack(rho)
    return curves

# -----------------------------------------------------------------------------
# the three checks: each computes, prints its lines and returns a JSON-ready summary and its table rows
# (check, quantity, observed, criterion, passed)

def check_a(n_drift, n_onestep, samples, z_max, seed=0):
    """Check (a): one MixiT layer from PHI0, Monte Carlo over W^V and W (paper 1, eqs. A.6-A.12). The mean of
    n dPhi against the drift at width n_drift (exact at every width, with Monte Carlo error growing like
    sqrt(n)); the covariance of sqrt(n) dPhi against Sigma_V + Sigma_M at width n_onestep (O(1/n) corrections).
    Passes when every |z| < z_max. -> (summary dict with passed, rows)."""
    t0 = time.time()
    Phi = PHI0
    mu, Sigma = drift(vec(Phi)), Sigma_V(vec(Phi)) + Sigma_M(vec(Phi))
    X_small = one_step_samples(Phi, n_drift, samples, seed=seed)
    z_mean, _, mean, _ = moment_zscores(X_small, mu, Sigma, n_drift)
    z_zero = moment_zscores(X_small, torch.zeros_like(mu), Sigma, n_drift)[0]     # is the drift resolved?
    X = one_step_samples(Phi, n_onestep, samples, seed=seed + 1)
    z_mean_big, z_cov, mean_big, cov = moment_zscores(X, mu, Sigma, n_onestep)
    diag = torch.tensor([a == b for a, b in zip(*torch.triu_indices(Phi.shape[0], Phi.shape[0]))])
    ok_mean, ok_cov = bool(z_mean.abs().max() < z_max), bool(z_cov.abs().max() < z_max)
    summary = dict(Phi=Phi.tolist(), samples=samples, n_drift=n_drift, n_cov=n_onestep,
                   drift=mu.tolist(), mc_mean=mean.tolist(), z_mean=z_mean.tolist(), z_mean_vs_zero=z_zero.tolist(),
                   mc_mean_n_cov=mean_big.tolist(), z_mean_n_cov=z_mean_big.tolist(),
                   Sigma=Sigma.tolist(), mc_cov=cov.tolist(), z_cov=z_cov.tolist(),
                   max_abs_z_mean=float(z_mean.abs().max()), max_abs_z_cov=float(z_cov.abs().max()),
                   passed=ok_mean and ok_cov, seconds=time.time() - t0)
    print(f"(a) one layer from PHI0 (m={Phi.shape[0]}), {samples} samples per width")
    print("    drift                " + " ".join(f"{v:7.3f}" for v in mu))
    print(f"    MC mean n dPhi, n={n_drift:<4d}" + " ".join(f"{v:7.3f}" for v in mean))
    print("    z vs drift           " + " ".join(f"{v:7.2f}" for v in z_mean))
    print("    z vs 0               " + " ".join(f"{v:7.2f}" for v in z_zero))
    print(f"    z vs drift, n={n_onestep:<5d} " + " ".join(f"{v:7.2f}" for v in z_mean_big))
    print(f"    Cov sqrt(n) dPhi vs Sigma_V + Sigma_M, n={n_onestep}, {len(z_cov)} entries: "
          f"max |z| {z_cov.abs().max():.2f}, rms z {z_cov.pow(2).mean().sqrt():.2f}")
    rows = [('a', f"max|z| mean n*dPhi vs drift, n={n_drift} ({len(z_mean)})",
             f'{z_mean.abs().max():.2f}', f'< {z_max:g}', ok_mean),
            ('a', f"min|z| diagonal mean n*dPhi vs 0, n={n_drift}",
             f'{z_zero[diag].abs().min():.2f}', '(drift resolved)', True),
            ('a', f"max|z| cov sqrt(n)*dPhi vs Sigma_V+Sigma_M, n={n_onestep} ({len(z_cov)})",
             f'{z_cov.abs().max():.2f}', f'< {z_max:g}', ok_cov)]
    return summary, rows

# check (b)'s statistics of Phi: the token correlation and Tr Phi/m, and the conditioning of Phi, which is where
# the width-n chain differs most from its limit (the Wishart factor's log-det drift has O(1/n) corrections).
STATS = {'corr': lambda P: token_corr(P, 0, 1),
         'trace': lambda P: P.diagonal(dim1=-2, dim2=-1).mean(-1),
         'log_cond': lambda P: (torch.linalg.eigvalsh(P)[..., 0] / P.diagonal(dim1=-2, dim2=-1).sum(-1)).log()}
STAT_LABELS = {'corr': 'Phi_12/sqrt(Phi_11 Phi_22)', 'trace': 'Tr Phi / m', 'log_cond': 'log(lambda_min / Tr Phi)'}

def check_b(widths, taus, draws, scheme, steps_per_unit, ks_alpha, seed=0):
    """Check (b): the law of each STATS statistic of Phi at depth tau*n of the width-n chain (mixit_chain) against
    `draws` SDE paths (sde_paths) at time tau, for every n in widths and tau in taus (paper 1, Theorem 2.1).
    Passes when at the widest n every KS distance is below the critical value at level ks_alpha and, where the
    narrowest n is distinguishable, the distance shrinks. widths: each at least m = 4.
    -> (summary dict with passed, rows, samples {'sde' or n: {tau: {stat: (draws,)}}})."""
    t0 = time.time()
    taus, widths = list(taus), sorted(widths)
    sde, clipped = sde_paths(PHI0, max(taus), draws, steps_per_unit, record=taus, scheme=scheme, seed=seed + 1,
                             progress=True)
    samples = {'sde': {tau: {s: f(sde[k]) for s, f in STATS.items()} for k, tau in enumerate(taus)}}
    ks = {s: {tau: {} for tau in taus} for s in STATS}
    for n in widths:
        rec = [int(round(tau * n)) for tau in taus]
        chain = mixit_chain(PHI0, n, max(rec), draws, rec, seed=seed + 2 + n, progress=True)
        samples[n] = {tau: {s: f(chain[k]) for s, f in STATS.items()} for k, tau in enumerate(taus)}
        for s in STATS:
            for tau in taus:
                ks[s][tau][n] = ks_2samp(samples[n][tau][s], samples['sde'][tau][s])
    crit = ks_critical(draws, draws, ks_alpha)
    ok, rows = True, []
    for s in STATS:
        for tau in taus:
            k = ks[s][tau]
            resolved = k[widths[0]] >= crit                 # a finite-width effect the test can see
            passed = k[widths[-1]] < crit and (not resolved or k[widths[-1]] < k[widths[0]])
            ok &= bool(passed)
            rows.append(('b', f'KS {s} tau={tau:g}, n=' + '/'.join(map(str, widths)),
                         '/'.join(f'{k[n]:.3f}' for n in widths),
                         f"last < {crit:.3f}{', shrinks' if resolved else ''}", passed))
    summary = dict(Phi0=PHI0.tolist(), widths=widths, taus=taus, draws=draws, sde_scheme=scheme,
                   sde_steps_per_unit=steps_per_unit, sde_steps_clipped=clipped, ks_critical=crit, ks_alpha=ks_alpha,
                   ks={s: {str(tau): {str(n): v for n, v in ks[s][tau].items()} for tau in taus} for s in STATS},
                   means={str(key): {str(tau): {s: float(v.mean()) for s, v in d.items()} for tau, d in val.items()}
                          for key, val in samples.items()},
                   passed=bool(ok), seconds=time.time() - t0)
    print(f"(b) width-n chain vs SDE ({scheme} scheme, dtau=1/{steps_per_unit}"
          + (f", {clipped} steps clipped a path" if scheme == 'em' else '')
          + f"), {draws} draws each, KS critical value at {ks_alpha:g}: {crit:.4f}")
    for s in STATS:
        for tau in taus:
            print(f"    KS {s:8s} tau={tau:g}: " + "  ".join(f"n={n}: {ks[s][tau][n]:.4f}" for n in widths))
    return summary, rows, samples

def check_c(n, m, depth, draws, seed=0):
    """Check (c): mean token correlation against depth for attention-only stacks (collapse_curves). Passes when
    both softmax stacks end above 0.99 (rank collapse) and MixiT ends within 0.5 of 0.
    -> (summary dict with passed, rows, curves {name: (depth+1, draws)})."""
    t0 = time.time()
    curves = collapse_curves(n, m, depth, draws, seed=seed + 3, progress=True)
    final = {name: float(c[-1].mean()) for name, c in curves.items()}
    passes = {name: v > 0.99 if name.startswith('softmax') else abs(v) < 0.5 for name, v in final.items()}
    rows = [('c', f'mean token corr at layer {depth}, {name}', f'{v:.3f}',
             '> 0.99 (collapse)' if name.startswith('softmax') else '|.| < 0.5 (no collapse)', passes[name])
            for name, v in final.items()]
    summary = dict(n=n, m=m, depth=depth, draws=draws,
                   mean_corr={name: c.mean(1).tolist() for name, c in curves.items()}, final_mean_corr=final,
                   passed=all(passes.values()), seconds=time.time() - t0)
    print(f"(c) attention-only stacks, n={n}, m={m}, {depth} layers: mean token correlation at layers 0/1/4/16/{depth}")
    for name, c in curves.items():
        print(f"    {name:24s} " + " ".join(f"{c[l].mean():6.3f}" for l in (0, 1, 4, 16, depth) if l <= depth))
    return summary, rows, curves

# -----------------------------------------------------------------------------
# figures

def plot_a(path, summary):
    """Monte Carlo mean and covariance of one layer against drift and Sigma_V + Sigma_M (check_a's summary)."""
    import matplotlib.pyplot as plt
    mu, mean = summary['drift'], summary['mc_mean']
    Sigma, cov = torch.tensor(summary['Sigma']), torch.tensor(summary['mc_cov'])
    i, j = torch.triu_indices(len(mu), len(mu))
    fig, ax = plt.subplots(1, 2, figsize=(8, 3.6))
    ax[0].plot(mu, mean, 'o', ms=4)
    ax[1].plot(Sigma[i, j], cov[i, j], 'o', ms=3)
    for a, lab in zip(ax, ['E[n dPhi]', 'Cov[sqrt(n) dPhi]']):
        lo, hi = a.get_xlim()
        a.plot([lo, hi], [lo, hi], 'k-', lw=0.7)
        a.set_ylabel(f'Monte Carlo {lab}')
    ax[0].set_xlabel('drift (Tr Phi/m - M(Phi)) I'); ax[1].set_xlabel('Sigma_V + Sigma_M')
    ax[0].set_title(f"mean, n={summary['n_drift']}", fontsize=9)
    ax[1].set_title(f"covariance, n={summary['n_cov']}", fontsize=9)
    fig.suptitle(f"(a) one MixiT layer from PHI0, {summary['samples']} samples")
    fig.tight_layout(); fig.savefig(path, dpi=90); plt.close(fig)

def plot_b(path, summary, samples):
    """Histograms of each statistic, chain against SDE, and KS distance against width (check_b's outputs)."""
    import matplotlib.pyplot as plt
    widths, taus, ks = summary['widths'], summary['taus'], summary['ks']
    stats = list(ks)
    fig, ax = plt.subplots(len(stats), len(taus) + 1, figsize=(4 * (len(taus) + 1), 3.3 * len(stats)), squeeze=False)
    for r, s in enumerate(stats):
        for c, tau in enumerate(taus):
            a = ax[r, c]
            ref = samples['sde'][tau][s]
            lo, hi = ref.quantile(0.002).item(), ref.quantile(0.99).item()
            bins = torch.linspace(lo, hi, 60).numpy()
            a.hist(ref.numpy(), bins, density=True, color='0.8', label=f"SDE ({summary['sde_scheme']} scheme)")
            for n in widths:
                a.hist(samples[n][tau][s].numpy(), bins, density=True, histtype='step', label=f'chain n={n}')
            a.set_title(f"{STAT_LABELS[s]}, tau={tau:g}", fontsize=9)
        a.legend(fontsize=7)
        a = ax[r, -1]
        for tau in taus:
            a.loglog(widths, [ks[s][str(tau)][str(n)] for n in widths], 'o-', label=f'tau={tau:g}')
        a.axhline(summary['ks_critical'], color='k', ls=':', lw=0.8, label=f"KS {summary['ks_alpha']:g} critical")
        a.set_xticks(widths, [str(n) for n in widths]); a.minorticks_off()
        a.set_xlabel('width n'); a.set_title(f'KS distance to SDE, {s}', fontsize=9); a.legend(fontsize=7)
    fig.tight_layout(); fig.savefig(path, dpi=80); plt.close(fig)

def plot_c(path, curves, n, m):
    """Mean token correlation against layer, with its 10-90% band (check_c's curves)."""
    import matplotlib.pyplot as plt
    fig, a = plt.subplots(figsize=(5.5, 3.6))
    for name, c in curves.items():
        l = torch.arange(c.shape[0])
        a.plot(l, c.mean(1), label=name)
        a.fill_between(l, c.quantile(0.1, 1), c.quantile(0.9, 1), alpha=0.2)
    a.set_xscale('symlog', linthresh=1); a.set_xlabel('layer'); a.set_ylabel('mean token correlation')
    a.set_title(f'(c) attention-only stacks, n={n}, m={m}'); a.legend(fontsize=8)
    fig.tight_layout(); fig.savefig(path, dpi=90); plt.close(fig)

# -----------------------------------------------------------------------------
# paper 1, Table 6: the token covariance of a model of train.py

@torch.no_grad()
def token_covariance(model, idx):
    """Paper 1, Table 6: the covariance between the last-layer hidden representations of different tokens of
    a sequence, averaged over token pairs and sequences. A token's representation is its final-norm output
    h_t (n_embd,), the last hidden state of the authors' Hugging Face models; the covariance of tokens s, t
    is torch.cov's over the n_embd features, (h_s - mean h_s) . (h_t - mean h_t) / (n_embd - 1).
    model: a model.GPT; idx: (B, T) token ids. Returns {'covariance', 'correlation'}: floats, the mean over
    sequences and pairs s < t of the covariance and of the correlation (paper 1 prints the covariance in
    units of 1e-2)."""
    x, rotation = model.embed(idx)
    for block in model.blocks():
        x = block(x, rotation)
    h = model.transformer.ln_f(x).double()                                 # (B, T, n)
    h = h - h.mean(-1, keepdim=True)
    C = h @ h.transpose(1, 2) / (h.shape[-1] - 1)                          # (B, T, T)
    a, b = torch.triu_indices(C.shape[-1], C.shape[-1], 1)
    return dict(covariance=C[:, a, b].mean().item(), correlation=mean_offdiag_corr(C).mean().item())

# -----------------------------------------------------------------------------
# command line: python sde.py check [--key=value ...]

def checks_bytes(checks, m, n_drift, n_onestep, samples_onestep, taus, draws, n_collapse, m_collapse,
                 draws_collapse):
    """About the most memory one of the checks holds at once, in bytes (float64 tensors), check's settings: (a)
    layers drawn in chunks of 10,000 (W^V h and the products it enters, at its width), then the samples and their
    pairwise products; (b) m x m chains and p x p SDE steps per draw, whatever the width; (c) the n x n
    attention-only stacks."""
    p = m * (m + 1) // 2
    return 8 * max(('a' in checks) * (min(samples_onestep, 10_000) * max(n_drift, n_onestep) * m * 4
                                      + samples_onestep * p * (p + 2)),
                   ('b' in checks) * draws * (len(taus) + 8) * p * p,
                   ('c' in checks) * draws_collapse * (3 * n_collapse ** 2 + 3 * n_collapse * m_collapse
                                                       + m_collapse ** 2))

def check(checks='abc',               # which checks to run: some of a, b, c
          seed=1337,                  # seeds every check's random numbers
          out_dir='out/sde',          # results.json and PNGs go here
          num_threads=1,              # torch threads: the work is batches of tiny matrices, where more only cost
          z_max=4.0,                  # (a) fails when any |z| reaches this
          n_drift=16,                 # (a) width for the mean of n dPhi (exact at every n, MC error grows like sqrt(n))
          n_onestep=1024,             # (a) width for the covariance of sqrt(n) dPhi (O(1/n) corrections)
          samples_onestep=50_000,     # (a) Monte Carlo layers per width
          widths=(32, 128, 512),      # (b) widths n of the finite chain, each run to depth tau * n (at least m = 4)
          taus=(0.5, 1.0),            # (b) SDE times tau compared
          draws=30_000,               # (b) independent networks per width, and SDE paths
          sde_scheme='sqrt',          # (b) 'sqrt' (square-root Euler, PSD by construction) or 'em' (literal, clipped)
          sde_steps=1024,             # (b) Euler steps per unit of tau
          ks_alpha=0.001,             # (b) the widest n must match the SDE at this two-sample KS level
          n_collapse=64,              # (c) width of the attention-only stacks
          m_collapse=8,               # (c) tokens
          depth_collapse=128,         # (c) layers
          draws_collapse=32):         # (c) networks per stack
    """Paper 1, Theorem 2.1: (a) one layer's moments, (b) the chain's law against SDE paths, (c) rank collapse."""
    config = dict(locals())           # the settings, saved with the results
    m = PHI0.shape[0]
    if not checks or set(checks) - set('abc'):
        fail(f"checks must name some of a, b, c, got {checks!r}")
    if sde_scheme not in ('sqrt', 'em'):
        fail(f"sde_scheme must be 'sqrt' or 'em', got {sde_scheme!r}")
    at_least(1, num_threads=num_threads, n_drift=n_drift, n_onestep=n_onestep, sde_steps=sde_steps,
             n_collapse=n_collapse, m_collapse=m_collapse, depth_collapse=depth_collapse, draws_collapse=draws_collapse)
    if min(samples_onestep, draws) < 2:
        fail(f"samples_onestep and draws must be at least 2, got {samples_onestep}, {draws}")
    if not widths or min(widths) < m or not taus or min(taus) <= 0:
        fail(f"widths must be at least m = {m} and taus positive, got widths={widths}, taus={taus}")
    if num_threads > 1024:
        fail(f"--num_threads must be at most 1024, got {num_threads}")
    short = memory_shortfall(checks_bytes(checks, m, n_drift, n_onestep, samples_onestep, taus, draws, n_collapse,
                                          m_collapse, draws_collapse))
    if short:
        fail(f"the checks' tensors (samples, draws and widths) need more memory than there is: {short}; lower "
             f"--draws=<n>, --samples_onestep=<n>, --n_onestep=<n>, --n_collapse=<n> or --draws_collapse=<n>")
    try:
        output_folder(out_dir, 'out_dir')
    except ValueError as e:
        fail(e)
    torch.set_num_threads(num_threads)
    import matplotlib
    matplotlib.use('Agg')
    res, rows = {'config': config}, []
    if 'a' in checks:
        res['a'], r = check_a(n_drift, n_onestep, samples_onestep, z_max, seed)
        plot_a(os.path.join(out_dir, 'sde_onestep.png'), res['a'])
        rows += r
    if 'b' in checks:
        res['b'], r, samples = check_b(widths, taus, draws, sde_scheme, sde_steps, ks_alpha, seed)
        plot_b(os.path.join(out_dir, 'sde_paths.png'), res['b'], samples)
        rows += r
    if 'c' in checks:
        res['c'], r, curves = check_c(n_collapse, m_collapse, depth_collapse, draws_collapse, seed)
        plot_c(os.path.join(out_dir, 'sde_collapse.png'), curves, n_collapse, m_collapse)
        rows += r
    ok = res['passed'] = all(res[c]['passed'] for c in checks)
    with open(os.path.join(out_dir, 'results.json'), 'w') as f:
        json.dump(res, f, indent=1)
    w = max(len(r[1]) for r in rows)
    print(f"\n{'':2s} {'quantity':{w}s} {'observed':>22s}  {'criterion':24s} pass")
    for c, q, v, crit, p in rows:
        print(f"{c:2s} {q:{w}s} {v:>22s}  {crit:24s} {'ok' if p else 'FAIL'}")
    print(f"results and plots in {out_dir}; {'all checks passed' if ok else 'SOME CHECK FAILED'}")
    return 0 if ok else 1

def covariance(ckpt,                  # a checkpoint of train.py (ckpt.pt)
               n_seq=64,              # test sequences averaged over
               device='cpu',          # cpu | cuda | cuda:N | mps | auto: where the models run (in float32)
               save=''):              # also write the result as JSON to this path
    """Paper 1, Table 6: token covariance of a checkpoint's model, trained and freshly initialised (its seed)."""
    from checkpoint import gpt_config, load_checkpoint
    from hardware import resolve_device
    from model import GPT
    from runconfig import make_task
    at_least(1, n_seq=n_seq)
    try:
        if save:
            output_file(save, 'save')
        device, _ = resolve_device(device)
        ck = load_checkpoint(ckpt, keys=('model', 'model_args', 'config'))
        x = torch.as_tensor(make_task(ck['config']).eval_set()[0][:n_seq]).to(device)
        torch.manual_seed(ck['config'].get('seed', 1337))
        model = GPT(gpt_config(ck['model_args'], ckpt)).eval().to(device)   # initialised on the CPU: the same draw
        out = dict(checkpoint=ckpt, iter=ck.get('iter_num'), variant=ck['model_args']['variant'],
                   n_layer=ck['model_args']['n_layer'], sequences=len(x), init=token_covariance(model, x))
        model.load_state_dict(ck['model'])
        out['trained'] = token_covariance(model, x)
    except ValueError as e:         # a checkpoint whose task and model disagree (sequences longer than block_size)
        fail(e)
    print(f"{out['variant']}, {out['n_layer']} layers, {len(x)} sequences: covariance (1e-2) "
          f"{100 * out['init']['covariance']:.3f} at init, {100 * out['trained']['covariance']:.3f} trained; "
          f"correlation {out['init']['correlation']:.3f} at init, {out['trained']['correlation']:.3f} trained")
    if save:
        with open(save, 'w') as f:
            json.dump(out, f, indent=1)
            f.write('\n')
    return 0

if __name__ == '__main__':
    sys.exit(run_command(dict(check=check, covariance=covariance), doc=__doc__))
