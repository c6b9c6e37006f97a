"""Tests for bayes_paths.py (paper 3): the action's exact properties, the kernels, the predictor, the network's path
decomposition, the HMC claims at reduced size, NUTS vs theory (if pyro is installed), the one-shot data code on
synthetic arrays, the three commands end to end at tiny sizes, and the command line's errors and --help. No network,
no GPU, no real data."""
import gzip
import inspect
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import bayes_paths as bp
from experiments.paper3 import paths as paper3
import configurator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

torch.set_num_threads(1)
D64 = torch.float64


def random_spd(n, gen, scale=0.5):
    A = torch.randn(n, n, generator=gen, dtype=D64)
    return torch.eye(n, dtype=D64) + scale * A @ A.T / n


def toy_inputs(P, T, N0, heads, gen, readout='last'):
    x = torch.randn(P, T, N0, generator=gen, dtype=D64)
    Ws = [torch.randn(H, N0, N0, generator=gen, dtype=D64) / math.sqrt(N0) for H in heads]
    Omegas = [bp.attention_W(x, W) for W in Ws]
    return x, Omegas, bp.attentioned_inputs(x, Omegas, readout)


# ---------------------------------------------------------------------------------------------- action

@pytest.mark.parametrize('heads', [(2, 2), (3, 1), (2, 2, 2)])
def test_without_energy_the_minimiser_is_the_gp_point(heads):
    gen = torch.Generator().manual_seed(0)
    gp = bp.gp_order_parameters(heads)
    # the entropy's gradient vanishes at U = I ...
    Us = [U.clone().requires_grad_(True) for U in gp]
    bp.entropy(Us, heads).backward()
    assert max(U.grad.abs().max().item() for U in Us) < 1e-12
    # ... and the minimiser, started far from it, comes back to U = I, U_a = 1
    init = [random_spd(U.shape[0], gen, scale=2.0) for U in gp]
    C = torch.zeros(3, 3, *gp[0].shape, dtype=D64)           # unused without the energy term
    Us, U_a, info = bp.minimise_action(C, torch.ones(3, dtype=D64), 10, 0.1, heads, lr=0.05, tol=1e-7,
                                       max_iters=20000, with_energy=False, init=init)
    assert info['max_grad'] < 1e-7
    for U, I in zip(Us, gp):
        assert torch.allclose(U, I, atol=1e-5)
    assert abs(U_a.item() - 1) < 1e-5


@pytest.mark.parametrize('H', [1, 2, 3])
def test_closed_form_U_a_minimises_the_action(H):
    gen = torch.Generator().manual_seed(H)
    heads = (H, H)
    Us = [random_spd(H ** 2, gen), random_spd(H, gen, scale=3.0)]
    U_a = bp.U_a_closed(Us[-1], H).clone().requires_grad_(True)
    S = bp.entropy(Us, heads, U_a)
    (g,) = torch.autograd.grad(S, U_a)
    assert abs(g.item()) < 1e-12
    grid = U_a.item() * torch.linspace(0.5, 1.5, 101, dtype=D64)
    S_grid = torch.stack([bp.entropy(Us, heads, u) for u in grid])
    assert S.item() <= S_grid.min().item() + 1e-12
    assert S_grid.argmin().item() == 50


def test_entropy_for_one_head_is_the_scalar_form():
    # H = 1: every level contributes −𝓛(r) = r − ln r with 𝓛(U) = −U + ln U and r = U^(ℓ)/U^(ℓ+1) (U^(L+1) = U_a)
    L_ = lambda u: -u + math.log(u)
    for U1, U2, U_a in [(2.0, 0.7, 1.3), (0.3, 0.5, 0.9), (5.0, 3.0, 1.0)]:
        Us = [torch.tensor([[U1]], dtype=D64), torch.tensor([[U2]], dtype=D64)]
        S = bp.entropy(Us, (1, 1), torch.tensor(U_a, dtype=D64)).item()
        assert S == pytest.approx(-L_(U1 / U2) - L_(U2 / U_a) - L_(U_a), abs=1e-12)
    # L = 1: minimising over U_a leaves 2√U − ln U; the minimum over the whole chain sits at U = 1 (the GP point)
    for U in (0.2, 1.0, 4.0):
        S = bp.entropy([torch.tensor([[U]], dtype=D64)], (1,)).item()
        assert S == pytest.approx(2 * math.sqrt(U) - math.log(U), abs=1e-12)


# ---------------------------------------------------------------------------------------------- kernels

def test_attentioned_inputs_match_explicit_sums():
    gen = torch.Generator().manual_seed(1)
    for heads, readout in [((2, 3), 'last'), ((2, 1, 2), 'mean'), ((3,), 'first')]:
        x, Omegas, xi = toy_inputs(3, 5, 4, heads, gen, readout)
        T = x.shape[1]
        tstar = {'last': [T - 1], 'first': [0], 'mean': list(range(T))}[readout]
        for p in range(3):
            for k, path in enumerate(np.ndindex(*heads)):        # h_1 outermost
                ref = torch.zeros(4, dtype=D64)
                for ts in np.ndindex(*(T,) * len(heads)):          # (t_0 .. t_{L-1})
                    for t_last in tstar:
                        seq = list(ts) + [t_last]
                        w = 1.0
                        for l, h in enumerate(path):
                            w = w * Omegas[l][p, h, seq[l], seq[l + 1]]
                        ref += x[p, seq[0]] * w / len(tstar)
                assert torch.allclose(xi[p, k], ref, atol=1e-12)


def test_kernels_symmetric_psd_and_consistent():
    gen = torch.Generator().manual_seed(2)
    heads = (2, 2)
    _, _, xi = toy_inputs(12, 6, 5, heads, gen)
    C = bp.path_kernels(xi)                                          # (P, P, |Π|, |Π|)
    M = C.permute(0, 2, 1, 3).reshape(12 * 4, 12 * 4)
    assert torch.allclose(M, M.T, atol=1e-12)
    assert torch.linalg.eigvalsh(M).min() > -1e-10
    U = random_spd(4, gen)
    K = bp.kernel(U, xi)
    assert torch.allclose(K, K.T, atol=1e-12)
    assert torch.linalg.eigvalsh(K).min() > -1e-10
    assert torch.allclose(K, bp.kernel_from_C(U, C), atol=1e-12)
    assert torch.allclose(bp.kernel_diag(U, xi), torch.diagonal(K), atol=1e-12)
    # the GP kernel is the average of the same-path kernels
    assert torch.allclose(bp.kernel(torch.eye(4, dtype=D64), xi), torch.einsum('pqaa->pq', C) / 4, atol=1e-12)


def test_kernel_from_xi_equals_kernel_from_C_to_rounding():
    gen = torch.Generator().manual_seed(5)
    for heads in [(2, 2), (3, 3), (2, 1, 2)]:
        _, _, xi = toy_inputs(40, 6, 7, heads, gen)
        _, _, xs = toy_inputs(9, 6, 7, heads, gen)
        U = random_spd(int(np.prod(heads)), gen)
        for a, b in [(xi, None), (xs, xi)]:
            K_C = bp.kernel_from_C(U, bp.path_kernels(a, b))
            K_xi = bp.kernel(U, a, b)
            assert ((K_xi - K_C).abs().max() / K_C.abs().max()).item() < 1e-14


def test_energy_closed_form_gradient_equals_autograd():
    gen = torch.Generator().manual_seed(6)
    A = torch.randn(30, 50, generator=gen, dtype=D64)
    K = (A @ A.T / 50).requires_grad_(True)
    Y = torch.sign(torch.randn(30, generator=gen, dtype=D64))
    E1 = bp.energy(K, Y, 0.1)
    (g1,) = torch.autograd.grad(E1, K)
    E2 = bp.energy(K, Y, 0.1, closed_grad=False)
    (g2,) = torch.autograd.grad(E2, K)
    A_inv = torch.linalg.inv(K.detach() + 0.1 * torch.eye(30, dtype=D64))
    assert abs(E1.item() - E2.item()) < 1e-12
    assert abs(E1.item() - (torch.logdet(A_inv.inverse()) + Y @ A_inv @ Y).item()) < 1e-10
    assert (g1 - g2).abs().max().item() < 1e-10 * g1.abs().max().item()


def test_action_and_minimiser_from_xi_equal_those_from_C():
    gen = torch.Generator().manual_seed(7)
    heads = (2, 2)
    _, _, xi = toy_inputs(25, 5, 6, heads, gen)
    Y = torch.sign(xi[:, 0, 0] + 0.5 * torch.randn(25, generator=gen, dtype=D64))
    C = bp.path_kernels(xi)
    Us = [random_spd(4, gen).requires_grad_(True), random_spd(2, gen).requires_grad_(True)]
    S_xi, S_C = bp.action(Us, xi, Y, 10, 0.1, heads), bp.action(Us, C, Y, 10, 0.1, heads)
    g_xi, g_C = torch.autograd.grad(S_xi, Us), torch.autograd.grad(S_C, Us)
    assert abs(S_xi.item() - S_C.item()) < 1e-12 * abs(S_C.item())
    assert all((a - b).abs().max().item() < 1e-12 for a, b in zip(g_xi, g_C))
    U_xi = bp.minimise_action(xi, Y, 10, 0.1, heads, max_iters=300)[0][0]
    U_C = bp.minimise_action(C, Y, 10, 0.1, heads, max_iters=300)[0][0]
    assert (U_xi - U_C).abs().max().item() < 1e-9


def test_lbfgs_and_adam_reach_the_same_minimiser():
    gen = torch.Generator().manual_seed(8)
    heads = (2, 2)
    _, _, xi = toy_inputs(30, 5, 6, heads, gen)
    Y = torch.sign(xi[:, 0, 0] - xi[:, 3, 1] + 0.3 * torch.randn(30, generator=gen, dtype=D64))
    Us_adam, _, info_adam = bp.minimise_action(xi, Y, 5, 0.05, heads, tol=1e-7)
    U_adam = Us_adam[0]
    Us, _, info = bp.minimise_action(xi, Y, 5, 0.05, heads, tol=1e-7, optimizer='lbfgs')
    assert info['max_grad'] < 1e-7 and info_adam['max_grad'] < 1e-7
    assert info['steps'] < info_adam['steps']
    assert (Us[0] - U_adam).abs().max().item() < 1e-5 * U_adam.abs().max().item()
    assert (Us[0] - torch.eye(4, dtype=D64)).abs().max().item() > 0.1            # away from the GP point
    with pytest.raises(ValueError):
        bp.minimise_action(xi, Y, 5, 0.05, heads, optimizer='sgd')


def test_predictor_is_kernel_regression():
    gen = torch.Generator().manual_seed(3)
    heads, tau = (2, 2), 0.05
    _, _, xi = toy_inputs(15, 6, 5, heads, gen)
    _, _, xs = toy_inputs(7, 6, 5, heads, gen)
    Y = torch.sign(torch.randn(15, generator=gen, dtype=D64))
    U = random_spd(4, gen)
    # kernel written out path pair by path pair
    kfun = lambda a, b: sum(U[i, j] * (a[:, i] @ b[:, j].T) for i in range(4) for j in range(4)) / (4 * 5)
    K, k, kss = kfun(xi, xi), kfun(xs, xi), torch.diagonal(kfun(xs, xs))
    A = K + tau * torch.eye(15, dtype=D64)
    mean, var = bp.predictor(U, xi, Y, xs, tau)
    assert torch.allclose(mean, k @ torch.linalg.solve(A, Y), atol=1e-10)
    assert torch.allclose(var, kss - torch.einsum('ip,pi->i', k, torch.linalg.solve(A, k.T)), atol=1e-10)
    assert (var > 0).all()


def test_network_path_form_equals_layer_form_and_prior_order_parameter():
    gen = torch.Generator().manual_seed(4)
    heads, N, N0 = (2, 3), 6, 5
    x, Omegas, xi = toy_inputs(4, 7, N0, heads, gen)
    V0 = torch.randn(N, N0, generator=gen, dtype=D64)
    Vs = [torch.randn(H, N, N, generator=gen, dtype=D64) for H in heads]
    a = torch.randn(N, generator=gen, dtype=D64)
    assert torch.allclose(bp.network_output(xi, V0, a, Vs), bp.network_output_layers(x, Omegas, V0, a, Vs), atol=1e-12)
    # under the prior, U = ⟨V_eff V_effᵀ⟩/N is the GP point I (exactly, in expectation)
    S, N = 400, 60
    a = torch.randn(S, N, generator=gen, dtype=D64)
    Vs = [torch.randn(S, H, N, N, generator=gen, dtype=D64) for H in heads]
    U = bp.order_parameter_from_weights(a, Vs)
    assert torch.allclose(U, torch.eye(6, dtype=D64), atol=0.08)


def test_head_scores():
    U = torch.zeros(4, 4, dtype=D64)
    U[0, 0], U[0, 2], U[2, 0], U[3, 3] = 4.0, -1.0, -1.0, 0.5       # paths (0,0) (0,1) (1,0) (1,1)
    s = bp.head_scores(U, (2, 2))
    raw = np.array([[4 + 1 + 1, 1 + 1 + 0.5], [4 + 1 + 1, 0.5]])  # layer-1 head 0: π or π' with h1 = 0, ...
    assert np.allclose(s, raw / raw.max())


# ---------------------------------------------------------------------------------------------- HMC claims

@pytest.fixture(scope='module')
def hmc_small():
    return bp.hmc_setup(100, 500, seed=0)


def test_hmc_gp_good_path_and_finite_width(hmc_small):
    d = hmc_small
    gp = {k: bp.gp_accuracy(d['xi_tr'][:, i], d['y_tr'], d['xi_te'][:, i], d['y_te'], 0.01)
          for k, (i, h) in d['nets'].items()}
    assert gp['good'] >= 0.90
    assert gp['all'] < gp['good']                                     # adversarial paths hurt in the GP limit
    C = bp.path_kernels(d['xi_tr'])
    Us, _, info = bp.minimise_action(C, d['y_tr'], 10, 0.01, (2, 2))
    assert info['max_grad'] < 1e-5
    acc10 = bp.accuracy(bp.predictor(Us[0], d['xi_tr'], d['y_tr'], d['xi_te'], 0.01)[0], d['y_te'])
    assert acc10 > gp['all'] + 0.05
    U = Us[0]                                                         # order: good, adv-1, denoise, adv-2
    assert U[0, 0] > 3 * max(U[1, 1], U[3, 3])                        # adversarial paths suppressed
    assert U[0, 2] < 0                                                # good and denoising anti-correlated


# ---------------------------------------------------------------------------------------------- NUTS

def test_nuts_matches_theory_small():
    pytest.importorskip('pyro')
    gen = torch.Generator().manual_seed(0)
    heads, N0, T, N, tau = (2, 1), 5, 4, 6, 0.3
    x, xs = torch.randn(30, T, N0, generator=gen, dtype=D64), torch.randn(20, T, N0, generator=gen, dtype=D64)
    Ws = [torch.randn(H, N0, N0, generator=gen, dtype=D64) for H in heads]
    xi = bp.attentioned_inputs(x, [bp.attention_W(x, W) for W in Ws])
    xi_te = bp.attentioned_inputs(xs, [bp.attention_W(xs, W) for W in Ws])
    Y = torch.sign(xi[:, 0, 0] + 0.3 * torch.randn(30, generator=gen, dtype=D64))
    Us, _, _ = bp.minimise_action(bp.path_kernels(xi), Y, N, tau, heads)
    mean_th = bp.predictor(Us[0], xi, Y, xi_te, tau)[0]
    smp = bp.nuts_sample(xi, Y, N, heads, tau, warmup=40, samples=60, seed=0, max_tree_depth=5, progress=False)
    Vs = [smp[f'V{l + 1}'] for l in range(len(heads))]
    f = torch.stack([bp.network_output(xi_te, smp['V0'][s], smp['a'][s], [V[s] for V in Vs]) for s in range(60)])
    assert ((f.mean(0) - mean_th).norm() / mean_th.norm()).item() < 0.3      # sampled mean predictor ≈ theory
    U_s = bp.order_parameter_from_weights(smp['a'], Vs)
    err, dist_gp = (U_s - Us[0]).norm().item(), (torch.eye(2, dtype=D64) - Us[0]).norm().item()
    assert err < 0.7 * dist_gp                                   # sampled U sits nearer the theory than the GP point


# ---------------------------------------------------------------------------------------------- one-shot data code

def test_omniglot_tokens_and_episodes(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.random((5, 20, 105, 105)) < 0.9                     # same format as images_background.npz
    np.savez(tmp_path / 'om.npz', images=images, labels=np.repeat(np.arange(5), 20).reshape(5, 20))
    toks, labels = bp.load_omniglot(str(tmp_path / 'om.npz'))
    assert toks.shape == (100, 16, 64) and labels.tolist() == np.repeat(np.arange(5), 20).tolist()
    assert torch.allclose(toks.mean(-1), torch.zeros(100, 16), atol=1e-5)            # LayerNorm per patch
    # patch 0 of image 0 is the area average of its top-left 8×8 block of the 32×32 image, ink = 1
    ref = torch.nn.functional.interpolate(torch.from_numpy(~images[0, 0]).float()[None, None], size=(32, 32),
                                          mode='area')[0, 0, :8, :8].reshape(64)
    assert torch.allclose(toks[0, 0], torch.nn.functional.layer_norm(ref, (64,)), atol=1e-5)
    with pytest.raises(FileNotFoundError):
        bp.load_omniglot(str(tmp_path / 'missing.npz'))
    # episodes: tokens that encode (class, image) let us read every episode back
    n_cls, n_img = 7, 3
    ids = torch.arange(n_cls * n_img).float()
    tokens = torch.zeros(n_cls * n_img, 16, 64)
    tokens[:, :, 0] = ids[:, None]
    lab = torch.arange(n_cls).repeat_interleave(n_img)
    perm = torch.randperm(len(lab), generator=torch.Generator().manual_seed(0))       # labels need not be sorted
    x, y = bp.episodes(tokens[perm], lab[perm], 500, torch.Generator().manual_seed(1))
    assert x.shape == (500, 48, 64) and set(y.tolist()) == {1.0, -1.0}
    code = x - bp.position_code(48, 64)
    lv = bp.label_vectors(64)
    for j, v in enumerate(lv):
        assert torch.allclose(code[:, 16 * j:16 * j + 16, 1:], v[1:].expand(500, 16, 63), atol=1e-5)
    img = torch.round(code[:, ::16, 0] - lv[:, 0]).long()                             # (500, 3) image ids
    cls = img // n_img
    assert (cls[:, 0] != cls[:, 1]).all()
    assert ((cls[:, 2] == cls[:, 0]) == (y > 0)).all() and ((cls[:, 2] == cls[:, 1]) == (y < 0)).all()
    support = torch.where(y > 0, img[:, 0], img[:, 1])
    assert (img[:, 2] != support).all()                               # the query is another drawing of the class


def test_idx_loader(tmp_path):
    imgs = np.random.default_rng(0).integers(0, 256, (10, 28, 28), dtype=np.uint8)
    header = (2051).to_bytes(4, 'big') + (10).to_bytes(4, 'big') + (28).to_bytes(4, 'big') * 2
    with gzip.open(tmp_path / 't10k-images-idx3-ubyte.gz', 'wb') as f:       # closed: written before the read
        f.write(header + imgs.tobytes())
    with gzip.open(tmp_path / 't10k-labels-idx1-ubyte.gz', 'wb') as f:
        f.write((2049).to_bytes(4, 'big') + (10).to_bytes(4, 'big') + bytes(range(10)))
    toks, labels = bp.load_idx(str(tmp_path))
    assert toks.shape == (10, 16, 64) and labels.tolist() == list(range(10))
    with pytest.raises(FileNotFoundError):
        bp.load_idx(str(tmp_path / 'nope'))


def test_pair_episodes_every_query_once_fixed_supports():
    # tokens that encode their own index; classes 0 and 1 have 3 and 4 images, class 2 is ignored
    labels = torch.tensor([1, 0, 2, 1, 0, 1, 0, 1, 2])
    tokens = torch.zeros(9, 16, 64)
    tokens[:, :, 0] = torch.arange(9).float()[:, None]
    x, y = bp.pair_episodes(tokens, labels)
    assert x.shape == (7, 48, 64) and y.tolist() == [1.0] * 3 + [-1.0] * 4
    code = x - bp.position_code(48, 64)
    ids = torch.round(code[:, ::16, 0] - bp.label_vectors(64)[:, 0]).long()      # (7, 3): support0, support1, query
    assert ids[:, 2].tolist() == [1, 4, 6, 0, 3, 5, 7]                            # every 0/1 image once, 0s first
    assert (labels[ids[:, 0]] == 0).all() and (labels[ids[:, 1]] == 1).all()      # class-0 support first
    assert (ids[:, 0] != ids[:, 2]).all() and (ids[:, 1] != ids[:, 2]).all()      # never the query itself
    assert torch.equal(bp.pair_episodes(tokens, labels)[0], x)                    # fixed, not random
    with pytest.raises(ValueError):
        bp.pair_episodes(tokens, torch.tensor([0, 1, 1, 2, 2, 2, 2, 2, 2]))


@pytest.mark.parametrize('param', ['torch', 'ntk'])
def test_paths_net_is_the_layer_form_and_pruning_zeroes_the_head(param):
    torch.manual_seed(0)
    heads = (3, 2)
    net = bp.PathsNet(N0=8, N=6, G=5, heads=heads, param=param).double()
    x = torch.randn(4, 9, 8, dtype=D64)
    Omegas = net.omegas(x)
    V0, Vs, a = [w.detach().clone() if torch.is_tensor(w) else [v.detach().clone() for v in w] for w in net.weights()]
    with torch.no_grad():
        f = net(x)
        assert torch.allclose(f, bp.network_output_layers(x, Omegas, V0, a, Vs, 'mean'), atol=1e-10)
        # pruning head 2 of layer 1: the head's value weights zeroed; with the authors' rescaling the layer's head sum
        # is divided by √(H−1) instead of √H
        Vz = [V.clone() for V in Vs]
        Vz[0][1] = 0
        ref = bp.network_output_layers(x, Omegas, V0, a, Vz, 'mean')
        f_plain = net(x, bp.head_path_mask(heads, [(0, 1)], rescale=False).double())
        f_scaled = net(x, bp.head_path_mask(heads, [(0, 1)]).double())
        assert torch.allclose(f_plain, ref, atol=1e-10)
        assert torch.allclose(f_scaled, ref * math.sqrt(3 / 2), atol=1e-10)
        assert not torch.allclose(f_plain, f)
        # a layer with every head pruned gives f = 0
        assert torch.count_nonzero(bp.head_path_mask(heads, [(1, 0), (1, 1)])) == 0
        # the same model from precomputed attentioned inputs
        xi = net.path_inputs(x)
        assert torch.allclose(net.from_paths(xi), f, atol=1e-12)
    y = torch.sign(f)
    assert paper3.gd_correct(net, x, y).all() and paper3.gd_correct(net, xi, y, paths=True).all()


def test_torch_param_is_the_authors_init_and_differs_from_ntk_only_in_scale():
    torch.manual_seed(0)
    N0, N, G = 64, 256, 32
    net = bp.PathsNet(N0, N, G, (4, 4), 'torch')
    # nn.Linear's default init: U(−1/√fan_in, 1/√fan_in)
    for w, fan_in in [(net.V0, N0), (net.Vs[0], N), (net.a, N), (net.Q[0], N0), (net.K[1], N0)]:
        b = 1 / math.sqrt(fan_in)
        assert w.abs().max().item() <= b and w.abs().max().item() > 0.95 * b
        assert abs(w.std().item() - b / math.sqrt(3)) < 0.05 * b
    # the paper's units: a torch weight times √fan_in, variance 1/3
    V0, Vs, a = net.weights()
    assert abs(V0.std().item() - 1 / math.sqrt(3)) < 0.02 and abs(Vs[0].std().item() - 1 / math.sqrt(3)) < 0.02
    ntk = bp.PathsNet(N0, N, G, (4, 4), 'ntk')
    assert abs(ntk.V0.std().item() - 1) < 0.05
    # one Adam step moves a torch weight by about lr, i.e. √fan_in·lr in the paper's units; an ntk weight by lr
    x, y = torch.randn(8, 12, N0), torch.sign(torch.randn(8))
    for model, gain in [(net, math.sqrt(N)), (ntk, 1.0)]:
        before = model.weights()[1][0].detach().clone()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        moved = (model.weights()[1][0].detach() - before).abs().median().item()
        assert abs(moved / (1e-3 * gain) - 1) < 0.1
    with pytest.raises(ValueError):
        bp.PathsNet(N0, N, G, (2,), 'mup')


# ---------------------------------------------------------------------------------------------- the commands, tiny

def write_oneshot_data(root, seed=0):
    """A data_dir in the layout `oneshot` reads: random Omniglot arrays (6 background and 4 evaluation characters,
    3 drawings each) and MNIST-format t10k files of 20 random images, 2 per class, for mnist/ and fashion-mnist/."""
    rng = np.random.default_rng(seed)
    os.makedirs(root / 'omniglot')
    for name, n_chars in (('background', 6), ('evaluation', 4)):
        np.savez(root / 'omniglot' / f'images_{name}.npz', images=rng.random((n_chars, 3, 105, 105)) < 0.9)
    for folder in ('mnist', 'fashion-mnist'):
        os.makedirs(root / folder)
        header = (2051).to_bytes(4, 'big') + (20).to_bytes(4, 'big') + (28).to_bytes(4, 'big') * 2
        with gzip.open(root / folder / 't10k-images-idx3-ubyte.gz', 'wb') as f:
            f.write(header + rng.integers(0, 256, (20, 28, 28), dtype=np.uint8).tobytes())
        with gzip.open(root / folder / 't10k-labels-idx1-ubyte.gz', 'wb') as f:
            f.write((2049).to_bytes(4, 'big') + (20).to_bytes(4, 'big') + bytes(i % 10 for i in range(20)))


@pytest.mark.parametrize('two_paths,denoise_head', [(False, 'random'), (True, 'random'), (True, 'uniform')])
def test_hmc_command_tiny(tmp_path, two_paths, denoise_head):
    res = paper3.hmc(out_dir=str(tmp_path), P=20, P_test=40, T=6, N0_feat=10, widths=(3, 10), two_paths=two_paths,
                 denoise_head=denoise_head, max_iters=300)
    paths = ['good', 'denoise'] if two_paths else bp.HMC_PATHS
    assert res['paths'] == paths and set(res['fw']) == {3, 10}
    assert np.array(res['U'][3]).shape == (len(paths), len(paths))
    assert all(len(v) == 20 for v in res['alignment'].values())        # at most P kernel PCs
    saved = json.loads((tmp_path / 'results.json').read_text())
    assert saved['fw']['3'] == res['fw'][3] and saved['config']['P'] == 20
    assert saved['config']['denoise_head'] == denoise_head
    tag = ('_2paths' if two_paths else '') + ('_uniform' if denoise_head == 'uniform' else '')
    for name in ('accuracy', 'U', 'alignment', 'kernels'):
        assert (tmp_path / f'paths_hmc_{name}{tag}.png').exists()


def test_uniform_denoising_head_is_zero_W_and_leaves_the_other_heads():
    Ws_r = bp.hmc_heads(10, 6, 10.0, torch.Generator().manual_seed(0))
    Ws_u = bp.hmc_heads(10, 6, 10.0, torch.Generator().manual_seed(0), denoise_head='uniform')
    assert torch.count_nonzero(Ws_u[0][1]) == 0 and torch.count_nonzero(Ws_r[0][1]) > 0
    assert torch.equal(Ws_u[0][0], Ws_r[0][0]) and torch.equal(Ws_u[1], Ws_r[1])
    x = torch.randn(3, 7, 17, dtype=D64)
    assert torch.allclose(bp.attention_W(x, Ws_u[0])[:, 1], torch.full((3, 7, 7), 1 / 7, dtype=D64))
    with pytest.raises(ValueError):
        bp.hmc_heads(10, 6, 10.0, torch.Generator().manual_seed(0), denoise_head='none')


def test_paired_se_is_the_standard_error_of_the_per_episode_difference():
    c1, c2 = torch.tensor([True, True, False, False]), torch.tensor([True, False, False, False])
    assert paper3.paired_se(c1, c2) == pytest.approx(0.5 / 2)          # d = (0, 1, 0, 0): std 0.5 over √4
    assert paper3.paired_se(c1, c1) == 0                                # the same classifier: no spread


def test_oneshot_command_tiny(tmp_path):
    write_oneshot_data(tmp_path / 'data')
    kw = dict(data_dir=str(tmp_path / 'data'), n_embd=8, qk_dim=4, gd_batch=4, eval_every=2, n_eval=20, P=10,
              widths=(10, 30), taus=(0.5, 1.0), max_iters=50)
    res = paper3.oneshot(out_dir=str(tmp_path / 'out'), heads=2, layers=2, gd_steps=3,
                     save_model=str(tmp_path / 'm.pt'), **kw)
    assert set(res['theory']) == {'GP', '10', '30'} and set(res['fw_acc']) == {'10', '30'}
    assert res['gd_acc'] == res['gd']['omniglot'] and res['gp_acc'] == res['theory']['GP']['omniglot']
    assert res['n_episodes'] == {'val': 20, 'omniglot': 20, 'mnist': 4, 'fashion': 4}   # every 0/1 image once
    assert all(res['theory'][k]['tau'] in (0.5, 1.0) for k in res['theory'])
    assert set(res['tau_scan']['10']) == {'0.5', '1.0'}
    for N in ('10', '30'):      # the finite-width gain over the GP limit, scored on the same episodes
        assert set(res['fw_gain'][N]) == set(paper3.ONESHOT_SETS)
        for k in paper3.ONESHOT_SETS:
            assert res['fw_gain'][N][k] == pytest.approx(res['theory'][N][k] - res['theory']['GP'][k])
            assert 0 <= res['fw_gain_se'][N][k] <= 1
    assert np.array(res['U_theory']).shape == (4, 4) and res['U_theory_N'] == 10
    assert len(res['alignment']['N=10']) == 10                                  # at most P kernel PCs
    assert sorted(res['head_scores']) == ['1.1', '1.2', '2.1', '2.2'] and max(res['head_scores'].values()) == 1
    curve = res['prune_curve']
    assert 2 <= len(curve) <= 3 and all(curve[0][k] == res['gd'][k] for k in paper3.ONESHOT_SETS)  # curve[0]: unpruned
    assert res['prune_order'] == sorted(res['head_scores'], key=res['head_scores'].get)
    assert res['prune_two'] == {}                                                # any two of four heads empty a layer
    assert json.loads((tmp_path / 'out' / 'results.json').read_text())['prune_order'] == res['prune_order']
    for name in ('accuracy', 'U', 'alignment', 'pruning'):
        assert (tmp_path / 'out' / f'paths_oneshot_{name}.png').exists()
    # the saved model, loaded, gives the same GD accuracies; three layers of three heads run too
    again = paper3.oneshot(out_dir=str(tmp_path / 'out2'), load=str(tmp_path / 'm.pt'), tag='_again', **kw)
    assert again['gd'] == res['gd'] and (tmp_path / 'out2' / 'paths_oneshot_U_again.png').exists()
    deep = paper3.oneshot(out_dir=str(tmp_path / 'out3'), heads=3, layers=3, gd_steps=2, param='ntk', **kw)
    assert np.array(deep['U_theory']).shape == (27, 27) and len(deep['head_scores']) == 9
    assert set(deep['prune_two']) == {'lowest', 'highest', 'diff', 'diff_se'}


# ---------------------------------------------------------------------------------------------- command line

def run_script(*args):
    return subprocess.run([sys.executable, 'bayes_paths.py', *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def assert_one_line_error(p, *words):
    assert p.returncode == 2 and 'Traceback' not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('error: ')
    for w in words:
        assert w in lines[0]


@pytest.mark.parametrize('flag,key', [('--widths=a,b', 'widths'), ('--widths=10,x', 'widths'), ('--tau=abc', 'tau'),
                                      ('--tau=0', 'tau')])
def test_hmc_bad_flags(flag, key):
    assert_one_line_error(run_script('hmc', flag), key)


def test_oneshot_missing_data_names_the_file(tmp_path):
    assert_one_line_error(run_script('oneshot', '--data_dir=/nonexistent'),
                          '/nonexistent/omniglot/images_background.npz')
    write_oneshot_data(tmp_path)
    os.remove(tmp_path / 'fashion-mnist' / 't10k-labels-idx1-ubyte.gz')
    assert_one_line_error(run_script('oneshot', f'--data_dir={tmp_path}'),
                          str(tmp_path / 'fashion-mnist' / 't10k-labels-idx1-ubyte.gz'))


@pytest.mark.parametrize('command,path', [('hmc', 'config/hmc.py'), ('oneshot', 'config/oneshot_paper.py'),
                                          ('oneshot', 'config/oneshot_cpu.py')])
def test_config_files_set_only_their_commands_keys(command, path):
    keys = {k: p.default for k, p in inspect.signature(getattr(paper3, command)).parameters.items()}
    configurator.apply_file(keys, {}, os.path.join(ROOT, path))      # ConfigError on an unknown key or a wrong type
    assert isinstance(keys['widths'], tuple) and all(isinstance(n, int) for n in keys['widths'])


@pytest.mark.parametrize('command', ['hmc', 'nuts', 'oneshot', 'timing'])
def test_help_lists_every_key(command):
    p = run_script(command, '--help')
    assert p.returncode == 0
    for key in inspect.signature(getattr(paper3, command)).parameters:
        assert f'--{key}=' in p.stdout
