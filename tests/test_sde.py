"""Tests for sde.py: MixiT's covariance SDE (paper 1, Theorem 2.1) against its definition and against
finite networks, the `check` command at tiny sizes, and its command line. The whole file runs in seconds on CPU."""
import inspect
import json
import math
import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import sde  # noqa: E402


pytestmark = pytest.mark.usefixtures('one_thread')      # batches of tiny matrices: threads only add overhead


def random_Phi(B, m, seed):
    g = torch.Generator().manual_seed(seed)
    scale = torch.rand(B, 1, m, generator=g, dtype=torch.float64)
    h = torch.randn(B, 3 * m, m, generator=g, dtype=torch.float64) * scale
    return h.mT @ h / (3 * m)


def Sigma_naive(Phi):
    """Sigma_V + Sigma_M of paper 1, eqs. A.1-A.2, written entry by entry with Kronecker deltas, for one (m, m) Phi."""
    m = Phi.shape[0]
    pairs = [(a, b) for a in range(m) for b in range(a, m)]
    d = lambda i, j: float(i == j)
    col = [Phi[:, k] for k in range(m)]
    C = lambda u, v: float(col[u] @ col[v] / m - col[u].mean() * col[v].mean())
    S = torch.zeros(len(pairs), len(pairs), dtype=torch.float64)
    for i, (a, b) in enumerate(pairs):
        for j, (g, e) in enumerate(pairs):
            V = Phi[a, g] * Phi[b, e] + Phi[a, e] * Phi[b, g]
            M = d(a, g) * C(b, e) + d(a, e) * C(b, g) + d(b, g) * C(e, a) + d(b, e) * C(a, g)
            S[i, j] = V + M
    return S


def test_vec_unvec_roundtrip_and_bad_length():
    Phi = random_Phi(5, 4, 0)
    assert torch.equal(sde.unvec(sde.vec(Phi)), Phi)
    assert sde.vec(Phi).shape == (5, 10)
    with pytest.raises(ValueError):
        sde.unvec(torch.zeros(7))


def test_drift_vanishes_when_all_entries_equal():
    for m in (2, 3, 6):
        for c in (0.3, 1.0, 7.5):
            phi = sde.vec(torch.full((m, m), c, dtype=torch.float64))
            assert sde.drift(phi).abs().max() < 1e-12
    # ... and not when the tokens are perfectly correlated but of unequal norms (rank one, Phi = v v^T)
    v = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    assert sde.unvec(sde.drift(sde.vec(torch.outer(v, v)))).diagonal().min() > 0.1


def test_drift_acts_on_diagonal_only_and_equals_TrPhi_over_m_minus_mean():
    Phi = random_Phi(50, 5, 1)
    D = sde.unvec(sde.drift(sde.vec(Phi)))
    off = D - torch.diag_embed(D.diagonal(dim1=-2, dim2=-1))
    assert off.abs().max() == 0
    g = torch.tensor([sum(P[i, i] for i in range(5)) / 5 - P.sum() / 25 for P in Phi], dtype=torch.float64)
    assert torch.allclose(D.diagonal(dim1=-2, dim2=-1), g[:, None].expand(50, 5), atol=1e-12)


def test_drift_positive_when_tokens_not_perfectly_correlated():
    Phi = random_Phi(200, 4, 2)
    tr_m = Phi.diagonal(dim1=-2, dim2=-1).mean(-1)
    M = Phi.mean((-2, -1))
    assert (tr_m > M + 1e-6).all()           # random Phi: never perfectly correlated with equal norms
    D = sde.unvec(sde.drift(sde.vec(Phi))).diagonal(dim1=-2, dim2=-1)
    assert (D > 0).all()
    assert torch.allclose(D[:, 0], tr_m - M, atol=1e-12)


def test_Sigma_matches_the_paper_entry_by_entry():
    for seed, m in ((3, 2), (4, 3), (5, 4)):
        Phi = random_Phi(1, m, seed)[0]
        S = sde.Sigma_V(sde.vec(Phi)) + sde.Sigma_M(sde.vec(Phi))
        assert torch.allclose(S, Sigma_naive(Phi), atol=1e-12)


def test_Sigma_symmetric_psd():
    Phi = random_Phi(300, 4, 6)
    phi = sde.vec(Phi)
    for S in (sde.Sigma_V(phi), sde.Sigma_M(phi), sde.Sigma_V(phi) + sde.Sigma_M(phi)):
        assert torch.equal(S, S.mT)
        lam = torch.linalg.eigvalsh(S)
        assert (lam[..., 0] >= -1e-10 * lam[..., -1]).all()
    # the sum is strictly positive definite for positive definite Phi (so Cholesky can take its root)
    assert (torch.linalg.eigvalsh(sde.Sigma_V(phi) + sde.Sigma_M(phi))[..., 0] > 0).all()


def test_one_layer_moments_match_drift_and_diffusion():
    """Check (a) at a size that runs in about a second: within 4 standard errors, and the same samples
    reject a zero drift and the diffusion without its mixing part (so the test can fail)."""
    phi0 = sde.vec(sde.PHI0)
    mu, Sigma = sde.drift(phi0), sde.Sigma_V(phi0) + sde.Sigma_M(phi0)
    X = sde.one_step_samples(sde.PHI0, 16, 20_000, seed=0)             # mean: exact at every width
    z_mean = sde.moment_zscores(X, mu, Sigma, 16)[0]
    assert z_mean.abs().max() < 4
    assert sde.moment_zscores(X, torch.zeros_like(mu), Sigma, 16)[0].abs().max() > 8
    n = 256                                                           # covariance: O(1/n) corrections
    X = sde.one_step_samples(sde.PHI0, n, 20_000, seed=1)
    z_cov = sde.moment_zscores(X, mu, Sigma, n)[1]
    assert z_cov.abs().max() < 4
    assert sde.moment_zscores(X, mu, sde.Sigma_V(phi0), n)[1].abs().max() > 10


def test_sqrt_scheme_step_has_the_sde_moments():
    """sde_paths' default scheme: one step's increment has mean drift*dtau and covariance Sigma*dtau."""
    dtau, N = 1 / 512, 20_000
    torch.manual_seed(0)
    S0 = torch.linalg.cholesky(sde.PHI0).mT.expand(N, 4, 4)
    S1 = sde.sqrt_step(S0, dtau)
    X = (sde.vec(S1.mT @ S1) - sde.vec(sde.PHI0)) / dtau        # plays n dPhi with n = 1/dtau
    phi0 = sde.vec(sde.PHI0)
    z_mean, z_cov, _, _ = sde.moment_zscores(X, sde.drift(phi0), sde.Sigma_V(phi0) + sde.Sigma_M(phi0), 512)
    assert z_mean.abs().max() < 4 and z_cov.abs().max() < 4


def test_reduced_chain_has_the_law_of_the_network():
    """mixit_chain (Bartlett factor, O(m^3) per layer) against the width-n network itself (full n x n W^V)
    at a width small enough for finite-n effects to be large."""
    n, m, depth, N = 8, 4, 6, 20_000
    chain = sde.mixit_chain(sde.PHI0, n, depth, N, [depth], seed=1)[0]
    torch.manual_seed(2)
    h = (math.sqrt(n) * torch.linalg.cholesky(sde.PHI0).mT).expand(N, m, m)
    h = torch.cat([h, torch.zeros(N, n - m, m, dtype=torch.float64)], 1)   # h^T h / n = PHI0
    for _ in range(depth):
        h = sde.mixit_layer(h, torch.randn(N, n, n, dtype=torch.float64) / math.sqrt(n),
                            torch.randn(N, m, m, dtype=torch.float64))
    net = h.mT @ h / n
    crit = sde.ks_critical(N, N, 0.001)
    for f in sde.STATS.values():
        assert sde.ks_2samp(f(chain), f(net)) < crit
    # a chain of the wrong width is told apart by the same test
    wrong = sde.mixit_chain(sde.PHI0, 2 * n, depth, N, [depth], seed=1)[0]
    assert sde.ks_2samp(sde.STATS['log_cond'](wrong), sde.STATS['log_cond'](net)) > crit


def test_chain_width_below_m_raises():
    with pytest.raises(ValueError):
        sde.mixit_chain(sde.PHI0, 3, 2, 10, [2])


def test_determinism_by_seed():
    a = sde.mixit_chain(sde.PHI0, 32, 16, 100, [16], seed=7)
    b = sde.mixit_chain(sde.PHI0, 32, 16, 100, [16], seed=7)
    c = sde.mixit_chain(sde.PHI0, 32, 16, 100, [16], seed=8)
    assert torch.equal(a, b) and not torch.equal(a, c)
    for scheme in ('sqrt', 'em'):
        p = sde.sde_paths(sde.PHI0, 0.1, 100, 100, scheme=scheme, seed=3)[0]
        q = sde.sde_paths(sde.PHI0, 0.1, 100, 100, scheme=scheme, seed=3)[0]
        r = sde.sde_paths(sde.PHI0, 0.1, 100, 100, scheme=scheme, seed=4)[0]
        assert torch.equal(p, q) and not torch.equal(p, r)
    x, y = sde.one_step_samples(sde.PHI0, 64, 100, seed=5), sde.one_step_samples(sde.PHI0, 64, 100, seed=5)
    assert torch.equal(x, y)


def test_paths_stay_symmetric_psd():
    for scheme in ('sqrt', 'em'):
        P = sde.sde_paths(sde.PHI0, 1.0, 500, 64, scheme=scheme, seed=0)[0][0]
        assert torch.equal(P, P.mT)
        assert (torch.linalg.eigvalsh(P)[:, 0] >= -1e-12 * P.diagonal(dim1=-2, dim2=-1).sum(-1)).all()


def test_ks_2samp_by_hand():
    x = torch.tensor([0.0, 1.0, 2.0])
    y = torch.tensor([0.5, 1.5, 2.5, 3.5])
    # ECDF gap is largest at t = 2: F_x = 1, F_y = 2/4
    assert sde.ks_2samp(x, y) == pytest.approx(0.5)
    assert sde.ks_2samp(x, x) == 0
    assert sde.ks_2samp(x, x + 10) == 1


def test_rank_collapse_softmax_not_mixit():
    curves = sde.collapse_curves(n=32, m=4, depth=32, draws=8, seed=0)
    finals = {k: float(v[-1].mean()) for k, v in curves.items()}
    assert abs(float(curves['MixiT'][0].mean())) < 0.3                # start: nearly uncorrelated tokens
    assert all(v > 0.99 for k, v in finals.items() if k.startswith('softmax'))
    assert abs(finals['MixiT']) < 0.5


def test_check_command_tiny(tmp_path):
    """All three checks at tiny sizes: (a) and (c) pass there; (b)'s verdict is the exit status's."""
    status = sde.check(out_dir=str(tmp_path), samples_onestep=5000, n_onestep=128, widths=(8, 16), taus=(0.5,),
                       draws=2000, sde_steps=64, n_collapse=32, m_collapse=4, depth_collapse=32, draws_collapse=8)
    res = json.loads((tmp_path / 'results.json').read_text())
    assert res['a']['passed'] and res['c']['passed']
    assert set(res['b']['ks']) == set(sde.STATS) and res['b']['widths'] == [8, 16]
    assert status == (0 if res['passed'] else 1) and res['passed'] == res['b']['passed']
    assert res['config']['draws'] == 2000 and res['config']['widths'] == [8, 16]
    for name in ('onestep', 'paths', 'collapse'):
        assert (tmp_path / f'sde_{name}.png').exists()


def run_script(*args):
    return subprocess.run([sys.executable, 'sde.py', *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_memory_check_lets_the_documented_check_run(tmp_path):
    """results/sde/command.sh's `python sde.py check` (the defaults) peaks near 1.5 GiB resident: the estimate that
    refuses settings beyond the machine's memory is of that order (check (b) is m x m per draw at every width, not
    n x n), and a trillion draws or samples is refused with one line before anything runs."""
    d = {k: v.default for k, v in inspect.signature(sde.check).parameters.items()}
    need = sde.checks_bytes(d['checks'], sde.PHI0.shape[0], d['n_drift'], d['n_onestep'], d['samples_onestep'],
                            d['taus'], d['draws'], d['n_collapse'], d['m_collapse'], d['draws_collapse'])
    assert 2 ** 29 < need < 2 ** 32
    for flag in ('--draws=1000000000000', '--samples_onestep=1000000000000'):
        p = run_script('check', '--checks=' + ('b' if 'draws' in flag else 'a'), flag, f'--out_dir={tmp_path}')
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and 'need more memory than there is' in lines[0], p.stderr


@pytest.mark.parametrize('flag', ['--samples_onestep=x', '--checks=xyz', '--widths=2,8', '--m_collapse=0',
                                  '--n_drift=-1'])
def test_bad_flags_exit_2_with_one_line(flag):
    p = run_script('check', flag)
    assert p.returncode == 2 and 'Traceback' not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('error: ') and flag[2:].split('=')[0] in lines[0]


def test_covariance_names_a_device_it_cannot_use(tmp_path):
    """sde.py covariance --device: one line naming a device that is not one, or is not here, before any work."""
    for device, words in (('tpu', 'device must be auto, cpu, cuda, cuda:N or mps'),
                          ('cuda', "device='cuda' but CUDA is not available")):
        if device == 'cuda' and torch.cuda.is_available():
            continue
        p = run_script('covariance', str(tmp_path / 'ckpt.pt'), f'--device={device}')
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"error: {words}"), p.stderr


def test_help_lists_every_key():
    p = run_script('check', '--help')
    assert p.returncode == 0
    for key in inspect.signature(sde.check).parameters:
        assert f'--{key}=' in p.stdout


def test_token_covariance_is_torch_cov_of_the_final_hidden_states():
    """Table 6's covariance against torch.cov / torch.corrcoef over each sequence's final-norm outputs."""
    from model import GPT, GPTConfig
    torch.manual_seed(0)
    model = GPT(GPTConfig(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=16, variant='random')).eval()
    idx = torch.randint(0, 11, (3, 8))
    got = sde.token_covariance(model, idx)
    x, rotation = model.embed(idx)
    for block in model.blocks():
        x = block(x, rotation)
    h = model.transformer.ln_f(x).detach().double()
    off = ~torch.eye(8, dtype=torch.bool)
    cov = torch.stack([torch.cov(hb)[off].mean() for hb in h]).mean()
    corr = torch.stack([torch.corrcoef(hb)[off].mean() for hb in h]).mean()
    assert abs(got['covariance'] - cov.item()) < 1e-12 and abs(got['correlation'] - corr.item()) < 1e-12
