"""
Paper 3's experiments on the theory of bayes_paths.py: the hidden Markov chain task (Figs. 2, 5b/c), NUTS samples
against the theory (App. F, needs pyro-ppl), one-shot Omniglot with out-of-distribution sets and head pruning
(Figs. 3, 6, 7), and the timing of an action-gradient step. Their compute steps, figures, tables and commands:

    python -m experiments.paper3 hmc      [config.py ...] [--key=value ...]   # Figs. 2, 5b/c
    python -m experiments.paper3 nuts     [config.py ...] [--key=value ...]   # NUTS samples vs theory (pyro-ppl)
    python -m experiments.paper3 oneshot  [config.py ...] [--key=value ...]   # one-shot Omniglot, OOD, pruning
    python -m experiments.paper3 timing   [--key=value ...]                   # ms per action-gradient step

`python -m experiments.paper3 CMD --help` lists a command's keys; a config file holds plain assignments of them
(`python -m experiments.paper3 oneshot config/oneshot_paper.py --device=cuda`); `python bayes_paths.py CMD` is the
same command. `oneshot` reads data_dir (default data/): omniglot/images_background.npz and
omniglot/images_evaluation.npz (numpy arrays built from github.com/brendenlake/omniglot's
python/images_{background,evaluation}.zip: `images` bool (characters, 20, 105, 105), True = background), and the
t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz files of MNIST in mnist/ and of FashionMNIST in
fashion-mnist/. Results and figures go to out_dir (default out/paths for hmc and nuts, out/paths-oneshot for
oneshot; git-ignored).
"""

import importlib.util
import json
import math
import os
import re
import time

import numpy as np
import torch
from tqdm import tqdm

from bayes_paths import (DENOISE_HEADS, DTYPE, HMC_PATHS, OPTIMIZERS, PARAMS, PATCH, PathsNet, accuracy,
                         alignment, attention_QK, attentioned_inputs, energy, entropy, episodes, gp_accuracy,
                         gp_order_parameters, head_path_mask, head_scores, hmc_setup, kernel, load_idx,
                         load_omniglot, minimise_action, missing_file, network_output, nuts_sample,
                         order_parameter_from_weights, pair_episodes, path_kernels, predictor, training_kernel)
from configurator import at_least, fail, run_command
from files import cause, input_file, output_file, output_folder
from memory import memory_shortfall

# 7. Experiments: compute steps, figures, tables, and the three commands
# =============================================================================

ONESHOT_FILES = ('omniglot/images_background.npz', 'omniglot/images_evaluation.npz',
                 'mnist/t10k-images-idx3-ubyte.gz', 'mnist/t10k-labels-idx1-ubyte.gz',
                 'fashion-mnist/t10k-images-idx3-ubyte.gz', 'fashion-mnist/t10k-labels-idx1-ubyte.gz')
ONESHOT_SETS = ('omniglot', 'mnist', 'fashion')   # test sets; 'val' (Omniglot) picks τ and the GD checkpoint


def require(condition, message):
    """Stop with one line `error: message` and exit status 2 unless condition holds (the commands' setting checks)."""
    if not condition:
        fail(message)


MAX_PATHS = 2 ** 16       # |Π| = heads**layers above this is no network the theory can hold (kernels are |Π|² P²)


def rates(**values):
    """Stop with one `error:` line unless every value (a learning rate or a temperature) is in (0, 10]."""
    for key, value in values.items():
        require(0 < value <= 10, f"--{key} must be in (0, 10], got {value}")


def common(seed, threads=1, out_dir=None):
    """The commands' shared checks: a seed numpy and torch accept, a thread count torch can set, and the output
    folder made and writable before any work (files.output_folder)."""
    require(0 <= seed < 2 ** 32, f"--seed must be in [0, 2^32), got {seed}")
    require(1 <= threads <= 1024, f"--threads must be in [1, 1024], got {threads}")
    if out_dir is not None:
        try:
            output_folder(out_dir, 'out_dir')
        except ValueError as e:
            fail(e)


def path_count(heads, layers):
    """|Π| = heads**layers, the number of attention paths; one `error:` line past MAX_PATHS (checked on
    logarithms, so that absurd settings never form the power)."""
    require(layers * math.log2(heads) <= math.log2(MAX_PATHS),
            f"--heads={heads} --layers={layers}: heads^layers paths, over {MAX_PATHS:,}; lower --heads=<n> or "
            f"--layers=<n>")
    return heads ** layers


def fits(need, settings, lower):
    """Stop with one `error:` line when need bytes (the estimate, before anything is built) exceed the memory
    available; settings names the keys behind it, lower the ones to lower."""
    short = memory_shortfall(need)
    require(not short, f"{settings}: {short}; lower {lower}")


def hmc_checks(seed, P, P_test, T, N0_feat, tau, beta, sigma_par, sigma_perp, denoise_head, lr, max_iters, n_paths,
               out_dir, N=1):
    """hmc's and nuts' settings checked before any work, with the memory of the data, the attentioned inputs and
    the path kernels (P + P_test)² |Π|² estimated up front."""
    require(P >= 2 and P_test >= 1, f"need P >= 2 and P_test >= 1, got P={P}, P_test={P_test}")
    require(T >= 2 and N0_feat >= 2, f"need T >= 2 and N0_feat >= 2, got T={T}, N0_feat={N0_feat}")
    require(denoise_head in DENOISE_HEADS,
            f"denoise_head must be one of {', '.join(DENOISE_HEADS)}, got {denoise_head!r}")
    at_least(1, max_iters=max_iters)
    rates(tau=tau, lr=lr)
    for key, value in dict(beta=beta, sigma_par=sigma_par, sigma_perp=sigma_perp).items():
        require(0 < value < 1e6, f"--{key} must be in (0, 1e6), got {value}")
    n, D = P + P_test, N0_feat + T + 1
    fits(8 * (n * (T + 1) * D + 3 * n * (T + 1) ** 2 + n * n * n_paths ** 2 + N * D * 8),
         f"--P={P} --P_test={P_test} --T={T} --N0_feat={N0_feat}", "--P=<n>, --P_test=<n>, --T=<n> or --N0_feat=<n>")
    common(seed, out_dir=out_dir)


def checked_device(name):
    """torch.device(name); stops with one `error:` line if name is no device or a CUDA device is not available."""
    try:
        dev = torch.device(name)
    except RuntimeError:
        fail(f"device={name!r} is not a torch device (e.g. cpu, cuda, cuda:1)")
    if dev.type == 'cuda' and not torch.cuda.is_available():
        fail(f"device={name!r}, but torch finds no CUDA device")
    return dev


def save_json(obj, path):
    """Write obj to path as indented JSON."""
    with open(path, 'w') as f:
        json.dump(obj, f, indent=1)


def path_names(heads):
    """Labels of the paths (h_1..h_L), 1-based, h_1 outermost: heads (2, 2) → ['11', '12', '21', '22']."""
    return [''.join(str(h + 1) for h in path) for path in np.ndindex(*heads)]


def head_label(l, h):
    """'layer.head', 1-based: (0, 1) → '1.2'."""
    return f'{l + 1}.{h + 1}'


def pyplot():
    """matplotlib.pyplot on the Agg backend (figures go to files only)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, path):
    """Write fig to path as a PNG (110 dpi, trimmed to its content) and close it."""
    fig.savefig(path, dpi=110, bbox_inches='tight')
    pyplot().close(fig)


def plot_alignment(alignment, path, width, title=''):
    """The kernel-task alignment (paper 3, Figs. 2d and 4c): each kernel's |overlap with Y| against its principal
    components' rank, one curve per kernel of alignment ({label: overlaps}, at most two), written to path."""
    fig, ax = pyplot().subplots(figsize=(width, 3.0))
    for (label, overlap), color in zip(alignment.items(), ('b', 'orange')):
        ax.plot(range(1, len(overlap) + 1), overlap, '.-', color=color, label=label)
    ax.set_xlabel('kernel PC rank')
    ax.set_ylabel('|overlap with Y|')
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    save_figure(fig, path)


def plot_U_grid(Us_by_name, names, path, title, own_scale=()):
    """Heat maps of order parameters side by side, on one colour scale except the panels named in own_scale, which
    get their own. Us_by_name: {panel title: (|Π|, |Π|) array or nested list}; names: the |Π| path labels; path: the
    PNG written."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(Us_by_name), figsize=(2.5 * len(Us_by_name) + 0.6, 2.6))
    axes = np.atleast_1d(axes)
    shared = [np.abs(np.array(U)).max() for name, U in Us_by_name.items() if name not in own_scale]
    vmax = max(shared) if shared else 1.0
    shared_axes, im_shared = [], None
    for ax, (name, U) in zip(axes, Us_by_name.items()):
        v = np.abs(np.array(U)).max() if name in own_scale else vmax
        im = ax.imshow(np.array(U), cmap='RdBu_r', vmin=-v, vmax=v)
        ax.set_title(str(name), fontsize=9)
        ax.set_xticks(range(len(names)))
        ax.set_yticks(range(len(names)))
        fs = 6 if len(names) <= 16 else 4
        ax.set_xticklabels(names, rotation=90, fontsize=fs)
        ax.set_yticklabels(names if ax is axes[0] else [], fontsize=fs)
        if name in own_scale:
            fig.colorbar(im, ax=ax, shrink=0.8)
        else:
            shared_axes.append(ax)
            im_shared = im
    if shared_axes:
        fig.colorbar(im_shared, ax=shared_axes, shrink=0.8)
    fig.suptitle(title, fontsize=10)
    save_figure(fig, path)

# ----------------------------------------------------------------------------- hidden Markov chain task (Fig. 2)


def hmc_theory(d, net, widths, tau, lr=0.1, tol=1e-5, max_iters=20000, n_pcs=30):
    """The numbers of paper 3's Fig. 2c/d for the sub-network `net` ('all' or 'good+denoise') of d = hmc_setup(...):
    the GP-limit test accuracy of every sub-network; for each width N in widths the minimiser U of the action
    (eqs. 11-12, App. E), its test accuracy and how the minimisation ended; the overlaps |e_kᵀY|/|Y| of the first
    n_pcs training-kernel PCs with the labels at the smallest N and in the GP limit (Fig. 2d).
    → dict: gp {sub-network: accuracy}, network, paths (|Π| names), widths, fw {N: accuracy},
    U {N: (|Π|, |Π|) nested list}, minimisation {N: {steps, max_grad, S, U_a, seconds}}, alignment {label: list}."""
    gp = {name: gp_accuracy(d['xi_tr'][:, idx], d['y_tr'], d['xi_te'][:, idx], d['y_te'], tau)
          for name, (idx, _) in d['nets'].items()}
    idx, heads = d['nets'][net]
    xi_tr, xi_te, y_tr, y_te = d['xi_tr'][:, idx], d['xi_te'][:, idx], d['y_tr'], d['y_te']
    fw, Us, info = {}, {}, {}
    for N in tqdm(widths, desc='widths'):
        t0 = time.time()
        U_list, U_a, fit = minimise_action(xi_tr, y_tr, N, tau, heads, lr=lr, tol=tol, max_iters=max_iters)
        fw[N] = accuracy(predictor(U_list[0], xi_tr, y_tr, xi_te, tau)[0], y_te)
        Us[N] = U_list[0]
        info[N] = dict(fit, U_a=U_a.item(), seconds=time.time() - t0)
        tqdm.write(f"N={N:5d}  acc={fw[N]:.3f}  steps={fit['steps']}  max|grad|={fit['max_grad']:.1e}  "
                   f"S={fit['S']:.4f}  ({info[N]['seconds']:.1f}s)")
    N_small, k = min(widths), min(n_pcs, len(y_tr))
    overlaps = {f'N={N_small}': alignment(kernel(Us[N_small], xi_tr), y_tr)[:k].tolist(),
                'GP limit': alignment(kernel(torch.eye(len(idx), dtype=DTYPE), xi_tr), y_tr)[:k].tolist()}
    return dict(gp=gp, network=net, paths=[HMC_PATHS[i] for i in idx], widths=list(widths), fw=fw,
                U={N: U.tolist() for N, U in Us.items()}, minimisation=info, alignment=overlaps)


def nuts_point(path, network, denoise_head='random'):
    """(N, sampled mean-predictor accuracy) from a `nuts` command's JSON at path if it exists and sampled the same
    sub-network with the same denoising head, else None."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        res = json.load(f)
    same = res.get('network') == network and res.get('denoise_head', 'random') == denoise_head
    return (res['N'], res['acc_sampled']) if same else None


def plot_hmc(res, out_dir, sampled=None):
    """Paper 3's Fig. 2c top (accuracy against N), 2c bottom (U for each N) and 2d (kernel-PC overlaps) from the
    `hmc` command's results (hmc_theory's dict plus config), as paths_hmc_{accuracy,U,alignment}<tag>.png in out_dir
    (`hmc_tag`: _2paths for the good+denoise network of Fig. 2e, _uniform for a uniform denoising head, Fig. 5c).
    sampled: (N, accuracy) of NUTS samples, or None."""
    plt = pyplot()
    two = res['network'] == 'good+denoise'
    tag = hmc_tag(res['network'], res['config'].get('denoise_head', 'random'))
    Ns, fw, gp = sorted(res['widths']), res['fw'], res['gp']
    fig, ax = plt.subplots(figsize=(4.2, 3.2))
    ax.semilogx(Ns, [fw[N] for N in Ns], 'b-x', label='theory (finite width)')
    if sampled is not None:
        ax.plot([sampled[0]], [sampled[1]], 'ko', label='NUTS samples')
    ax.axhline(gp[res['network']], color='r', ls='-', label='GP, ' + ('good+denoise' if two else 'all paths'))
    ax.axhline(gp['good'], color='r', ls='--', label='GP, good path')
    if not two:
        ax.axhline(gp['good+denoise'], color='r', ls=':', label='GP, good+denoise')
    ax.set_xlabel('N')
    ax.set_ylabel('test accuracy')
    head = res['config'].get('denoise_head', 'random')
    ax.set_title(f"HMC task, σ⊥={res['config']['sigma_perp']:g}" + (f", {head} denoising head" if head != 'random'
                                                                   else ''), fontsize=10)
    ax.legend(fontsize=7)
    save_figure(fig, os.path.join(out_dir, f'paths_hmc_accuracy{tag}.png'))
    plot_U_grid({f'N={N}': res['U'][N] for N in Ns}, res['paths'], os.path.join(out_dir, f'paths_hmc_U{tag}.png'),
                'order parameter U (GP limit: identity)')
    plot_alignment(res['alignment'], os.path.join(out_dir, f'paths_hmc_alignment{tag}.png'), 4.2)


def hmc_tag(network, denoise_head):
    """PNG name suffix of an `hmc` run: '' for all four paths with the random head, '_2paths' for good+denoise,
    '_uniform' added for a uniform denoising head."""
    return ('_2paths' if network == 'good+denoise' else '') + ('_uniform' if denoise_head == 'uniform' else '')


def plot_hmc_kernels(d, net, U, N, path):
    """Paper 3's Fig. 5b: the same-path kernels C_ππ of the training set for every path of the sub-network `net` of
    d = hmc_setup(...), the GP kernel (U = I) and the kernel at width N (U the action's minimiser), examples ordered
    by class (the first half y = +1). U: (|Π|, |Π|); path: the PNG written."""
    plt = pyplot()
    idx, _ = d['nets'][net]
    xi = d['xi_tr'][:, idx]
    panels = {f'{HMC_PATHS[i]} path': xi[:, k] @ xi[:, k].T / xi.shape[-1] for k, i in enumerate(idx)}
    panels['GP kernel'] = kernel(torch.eye(len(idx), dtype=DTYPE), xi)
    panels[f'N={N} kernel'] = kernel(torch.as_tensor(U, dtype=DTYPE), xi)
    fig, axes = plt.subplots(1, len(panels), figsize=(2.3 * len(panels), 2.5))
    for ax, (name, K) in zip(axes, panels.items()):
        im = ax.imshow(K.numpy(), cmap='viridis')
        ax.set_title(name, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
    fig.suptitle('training-set kernels, examples ordered by class', fontsize=9)
    save_figure(fig, path)


def print_hmc(res):
    """U at the smallest N, then the accuracy table of the `hmc` command's results."""
    N_small, names, gp = min(res['widths']), res['paths'], res['gp']
    print(f"\nU at N={N_small} (rows/cols: {', '.join(names)}):")
    for name, row in zip(names, res['U'][N_small]):
        print(f"  {name:>8s} " + " ".join(f"{v:8.3f}" for v in row))
    print(f"\n| {'N':>6s} | FW theory | GP ({res['network']}) | GP good | GP good+denoise |")
    for N in res['widths']:
        print(f"| {N:6d} | {res['fw'][N]:9.3f} | {gp[res['network']]:9.3f} | {gp['good']:7.3f} | "
              f"{gp['good+denoise']:15.3f} |")

# ----------------------------------------------------------------------------- NUTS check (App. F)


def nuts_check(d, net, N, tau, warmup, samples, max_tree_depth=8, seed=0, lr=0.1, tol=1e-5, max_iters=20000):
    """Paper 3, App. F: NUTS samples of the weights of the sub-network `net` of d = hmc_setup(...) at width N against
    the theory at the same N: test accuracy of the sampled and the theoretical mean predictor (eq. 9), their sign
    agreement and correlation, and U from the samples (eq. 13) against the minimiser of the action (eq. 11).
    → JSON-ready dict (accuracies in [0, 1], U as nested lists, seconds of sampling). Raises ImportError without
    pyro-ppl."""
    idx, heads = d['nets'][net]
    xi_tr, xi_te, y_tr, y_te = d['xi_tr'][:, idx], d['xi_te'][:, idx], d['y_tr'], d['y_te']
    U_th = minimise_action(xi_tr, y_tr, N, tau, heads, lr=lr, tol=tol, max_iters=max_iters)[0][0]
    mean_th = predictor(U_th, xi_tr, y_tr, xi_te, tau)[0]
    t0 = time.time()
    smp = nuts_sample(xi_tr, y_tr, N, heads, tau, warmup, samples, seed, max_tree_depth)
    seconds = time.time() - t0
    Vs = [smp[f'V{l + 1}'] for l in range(len(heads))]
    U_s = order_parameter_from_weights(smp['a'], Vs)
    f_te = torch.stack([network_output(xi_te, smp['V0'][s], smp['a'][s], [V[s] for V in Vs])
                        for s in range(len(smp['a']))])
    mean_s = f_te.mean(0)
    return dict(network=net, paths=[HMC_PATHS[i] for i in idx], N=N,
                acc_theory=accuracy(mean_th, y_te), acc_sampled=accuracy(mean_s, y_te),
                acc_gp=gp_accuracy(xi_tr, y_tr, xi_te, y_te, tau),
                agree_sign=(torch.sign(mean_s) == torch.sign(mean_th)).double().mean().item(),
                corr_mean=torch.corrcoef(torch.stack([mean_s, mean_th]))[0, 1].item(),
                U_theory=U_th.tolist(), U_sampled=U_s.tolist(), U_rel_err=((U_s - U_th).norm() / U_th.norm()).item(),
                warmup=warmup, samples=samples, seconds=seconds)


def print_nuts(res):
    """Theory and sampled U side by side, then the comparison table of the `nuts` command's results."""
    N, names = res['N'], res['paths']
    print(f"\nU at N={N}, theory | sampled ({', '.join(names)}):")
    for name, r1, r2 in zip(names, res['U_theory'], res['U_sampled']):
        print(f"  {name:>8s} " + " ".join(f"{v:7.3f}" for v in r1) + "  | " + " ".join(f"{v:7.3f}" for v in r2))
    print(f"\n| N={N} | theory acc | NUTS mean-predictor acc | GP acc | sign agreement | corr(E f*) | "
          f"|U_s−U_th|/|U_th| | NUTS time |")
    print(f"| {'':4s} | {res['acc_theory']:10.3f} | {res['acc_sampled']:23.3f} | {res['acc_gp']:6.3f} | "
          f"{res['agree_sign']:14.3f} | {res['corr_mean']:10.3f} | {res['U_rel_err']:16.3f} | "
          f"{res['seconds']:7.0f} s |")

# ----------------------------------------------------------------------------- one-shot image task (Fig. 3)


def oneshot_data(data_dir, n_eval, seed=0):
    """The one-shot task's data (paper 3, §4.2, App. H): tokens of the Omniglot background characters (training) and
    the evaluation sets: 'val' and 'omniglot', n_eval episodes each from the first and the second half of the
    Omniglot evaluation characters; 'mnist' and 'fashion', out of distribution as in the authors' code: every
    t10k image of classes 0 and 1 (digits 0/1; T-shirt/Trouser) as a query, supports in a fixed order
    (`pair_episodes`; 2115 and 2000 episodes). data_dir holds ONESHOT_FILES. → dict
    train=(tokens (M, 16, 64) float32, labels (M,) int64), sets={name: (x (n, 48, 64) float32, y (n,) in {+1, −1})}.
    Raises FileNotFoundError naming the first missing file; every file is looked for before any is read."""
    files = [os.path.join(data_dir, f) for f in ONESHOT_FILES]
    for path in files:
        if not os.path.exists(path):
            raise missing_file(path)
    tr_tok, tr_lab = load_omniglot(files[0])
    ev_tok, ev_lab = load_omniglot(files[1])
    n_ev = int(ev_lab.max()) + 1
    val, test = ev_lab < n_ev // 2, ev_lab >= n_ev // 2
    g = torch.Generator().manual_seed(seed + 1)
    sets = {'val': episodes(ev_tok[val], ev_lab[val], n_eval, g),
            'omniglot': episodes(ev_tok[test], ev_lab[test], n_eval, g)}
    for name, folder in (('mnist', 'mnist'), ('fashion', 'fashion-mnist')):
        sets[name] = pair_episodes(*load_idx(os.path.join(data_dir, folder)))
    return dict(train=(tr_tok, tr_lab), sets=sets)


@torch.no_grad()
def gd_correct(model, x, y, path_mask=None, chunk=500, paths=False):
    """Per-episode correctness sign(f) = y of a PathsNet on episodes x: (n, T, N0) (paths=True: their attentioned
    inputs `model.path_inputs(x)`, (n, |Π|, N0)), y: (n,) in {+1, −1}, with the path weights path_mask (|Π|,)
    (None: all paths); runs on the model's device, `chunk` episodes at a time. → (n,) bool."""
    dev = model.a.device
    mask = None if path_mask is None else path_mask.to(dev)
    run = model.from_paths if paths else model
    f = torch.cat([run(xb.to(dev), mask).cpu() for xb in x.split(chunk)])
    return torch.sign(f) == y


def gd_accuracy(model, x, y, path_mask=None, chunk=500):
    """Accuracy (paper 3, §4.1) of a PathsNet on episodes x: (n, T, N0), y: (n,), as in `gd_correct`. → float."""
    return gd_correct(model, x, y, path_mask, chunk).double().mean().item()


def standard_error(p, n):
    """Binomial standard error √(p(1−p)/n) of an accuracy p over n episodes."""
    return math.sqrt(max(p * (1 - p), 0.0) / n)


def set_accuracies(correct):
    """Accuracy of each episode set from its per-episode hits. correct: {set: (n,) bool} → {set: float}."""
    return {k: c.double().mean().item() for k, c in correct.items()}


def train_gd_model(train, val, heads, n_embd, qk_dim, steps, batch, lr, eval_every, seed=0, device='cpu',
                   param='torch', max_minutes=0.0):
    """Gradient-descent training of PathsNet, all weights (paper 3, App. H.1): MSE on `batch` fresh episodes of the
    training tokens per step, Adam at learning rate lr (no schedule), validation accuracy every eval_every steps and
    at the last; the best-validation checkpoint is kept. train: (tokens (M, 16, N0), labels (M,)); val: (x, y)
    episodes; heads: (H_1..H_L); steps ≥ 1; param 'torch' or 'ntk' (PathsNet); max_minutes > 0 stops after that
    much wall clock (then at a validation check). → (model on device in eval mode, info {'seconds', 'steps',
    'best_step', 'best_val', 'curve': [[step, loss, val accuracy], ...]})."""
    tokens, labels = train
    torch.manual_seed(seed)
    model = PathsNet(tokens.shape[-1], n_embd, qk_dim, heads, param).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed + 2)
    best, best_state, best_step, curve, t0 = -1.0, None, 0, [], time.time()
    pbar = tqdm(range(1, steps + 1), desc='GD training')
    for step in pbar:
        x, y = episodes(tokens, labels, batch, g)      # fresh episodes every step
        loss = ((model(x.to(device)) - y.to(device)) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        out_of_time = max_minutes > 0 and time.time() - t0 > 60 * max_minutes
        if step % eval_every == 0 or step == steps or out_of_time:
            acc = gd_accuracy(model, *val)
            curve.append([step, loss.item(), acc])
            if acc > best:
                best, best_step = acc, step
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            pbar.set_postfix(loss=f'{loss.item():.3f}', val=f'{acc:.3f}')
            tqdm.write(f"step {step}: loss {loss.item():.4f}, val acc {acc:.3f}, {time.time() - t0:.0f}s")
            if out_of_time:
                tqdm.write(f"stopping after {max_minutes} minutes at step {step}")
                break
    info = dict(seconds=time.time() - t0, steps=step, best_step=best_step, best_val=best, curve=curve)
    model.load_state_dict(best_state)
    return model.eval(), info


def model_xi(model, x, chunk=500):
    """Attentioned inputs ξ^π (paper 3, eq. 7, mean readout) of episodes x: (n, T, N0) through a PathsNet's
    attention, in float64 on the CPU, `chunk` episodes at a time. → (n, |Π|, N0)."""
    Qs = [Q.detach().cpu().double() for Q in model.Q]
    Ks = [K.detach().cpu().double() for K in model.K]
    out = []
    for xb in x.double().split(chunk):
        out.append(attentioned_inputs(xb, [attention_QK(xb, Q, K) for Q, K in zip(Qs, Ks)], 'mean'))
    return torch.cat(out)


def oneshot_theory(model, train, sets, P, widths, taus, seed=0, lr=0.1, tol=1e-5, max_iters=20000,
                   optimizer='lbfgs', n_pcs=50):
    """Paper 3's theory (eqs. 9-12) with the query/key weights of a trained PathsNet (Fig. 3b-d): kernel regression on
    P fresh training episodes; for the GP limit and for each width N the temperature τ is the one of taus with the
    best accuracy on sets['val'] (App. H.2.1 scans the same grid, tuned in distribution), and every set is then
    scored at that τ. train: (tokens, labels); sets: {name: (x, y)} with 'val' among them.
    → dict: theory {'GP' or N: {set: accuracy, 'tau', and for N 'steps', 'max_grad', 'seconds'}},
    tau_scan {'GP' or N: {τ: val accuracy}}, U {N: (|Π|, |Π|) minimiser at its τ}, alignment {'N=<smallest>',
    'GP limit': first n_pcs overlaps |e_kᵀY|/|Y| of the training kernel's PCs (Fig. 3d)}, gain {N: {set: accuracy at
    N − the GP limit's}} and gain_se (paired over the same episodes), xi_tr (P, |Π|, N0), y_tr (P,), xi_sets
    {name: (xi, y)}."""
    x_tr, y_tr = episodes(*train, P, torch.Generator().manual_seed(seed + 3))
    y_tr = y_tr.double()
    xi_tr = model_xi(model, x_tr)
    xi_sets = {k: (model_xi(model, x), y.double()) for k, (x, y) in sets.items()}

    def correct(U, tau, names):             # {set: (n,) bool, each episode right or not}
        return {k: torch.sign(predictor(U, xi_tr, y_tr, xi_sets[k][0], tau)[0]) == xi_sets[k][1] for k in names}

    accuracies = lambda U, tau, names: set_accuracies(correct(U, tau, names))

    rest = [k for k in xi_sets if k != 'val']
    eye = torch.eye(xi_tr.shape[1], dtype=DTYPE)
    scan = {'GP': {tau: accuracies(eye, tau, ['val'])['val'] for tau in taus}}
    tau_gp = max(taus, key=lambda t: scan['GP'][t])
    gp_correct = correct(eye, tau_gp, rest)
    theory = {'GP': dict(val=scan['GP'][tau_gp], **set_accuracies(gp_correct), tau=tau_gp)}
    Us_best, gain, gain_se = {}, {}, {}
    for N in tqdm(widths, desc='theory widths'):
        scan[N], best = {}, None
        for tau in taus:
            t0 = time.time()
            Us, _, info = minimise_action(xi_tr, y_tr, N, tau, model.heads, lr=lr, tol=tol, max_iters=max_iters,
                                          optimizer=optimizer)
            scan[N][tau] = accuracies(Us[0], tau, ['val'])['val']
            if best is None or scan[N][tau] > best[0]:
                best = (scan[N][tau], tau, Us[0], dict(steps=info['steps'], max_grad=info['max_grad'],
                                                       seconds=time.time() - t0))
        val, tau, U, info = best
        Us_best[N] = U
        c = correct(U, tau, rest)
        theory[N] = dict(val=val, **set_accuracies(c), tau=tau, **info)
        gain[N] = {k: theory[N][k] - theory['GP'][k] for k in rest}
        gain_se[N] = {k: paired_se(c[k], gp_correct[k]) for k in rest}
        r = theory[N]
        tqdm.write(f"N={N}: tau={tau}, " + ", ".join(f"{k} {r[k]:.3f}" for k in xi_sets)
                   + f" (steps {r['steps']}, max|grad| {r['max_grad']:.1e})")
    N_small, k = min(widths), min(n_pcs, P)
    align = {f'N={N_small}': alignment(kernel(Us_best[N_small], xi_tr), y_tr)[:k].tolist(),
             'GP limit': alignment(kernel(eye, xi_tr), y_tr)[:k].tolist()}
    return dict(theory=theory, tau_scan=scan, U=Us_best, alignment=align, gain=gain, gain_se=gain_se, xi_tr=xi_tr,
                y_tr=y_tr, xi_sets=xi_sets)


def oneshot_nuts(th, N, heads, warmup, samples, seed=0, max_tree_depth=8):
    """NUTS samples of the one-shot theory network's weights at width N and the τ chosen for N (paper 3, Fig. 3b
    black dots, Fig. 3c "sampled"): the sampled mean predictor's accuracy on every set and U from the samples (eq. 13).
    th: `oneshot_theory`'s dict (N among its widths). → dict N, tau, acc {set: accuracy}, U_sampled (|Π|, |Π|)
    nested list, warmup, samples, seconds. Raises ImportError without pyro-ppl."""
    tau = th['theory'][N]['tau']
    t0 = time.time()
    smp = nuts_sample(th['xi_tr'], th['y_tr'], N, heads, tau, warmup, samples, seed, max_tree_depth)
    seconds = time.time() - t0
    Vs = [smp[f'V{l + 1}'] for l in range(len(heads))]
    acc = {}
    for k, (xi, y) in th['xi_sets'].items():
        f = torch.stack([network_output(xi, smp['V0'][s], smp['a'][s], [V[s] for V in Vs])
                         for s in range(len(smp['a']))]).mean(0)
        acc[k] = accuracy(f, y)
    return dict(N=N, tau=tau, acc=acc, U_sampled=order_parameter_from_weights(smp['a'], Vs).tolist(),
                warmup=warmup, samples=samples, seconds=seconds)


def paired_se(c1, c2):
    """Standard error of the accuracy difference of two classifiers scored on the same episodes: std(c1 − c2)/√n.
    c1, c2: (n,) bool. → float."""
    d = c1.double() - c2.double()
    return (d.std() / math.sqrt(len(d))).item() if len(d) > 1 else float('nan')


def prune_heads(model, xi_sets, scores, names=ONESHOT_SETS, rescale=True):
    """Head pruning without retraining (paper 3, §4.2, Fig. 3e/f, Fig. 7): accuracy on each set in names after
    pruning 0, 1, 2, ... heads in increasing order of score (until the next head would empty a layer), the accuracy
    drop when each head alone is pruned, and the two lowest- against the two highest-scoring heads pruned, each with
    its standard error (drops and differences: paired over the same episodes). xi_sets: {name: (model.path_inputs(x),
    y)}; scores: (L, max H) head scores; rescale as in `head_path_mask`.
    → dict order [(ℓ, h), ...], curve [{name: accuracy}] (curve[0] unpruned), curve_se, drop {(ℓ, h): {name: drop}},
    drop_se, two {'lowest', 'highest': {'heads', 'acc', 'se'}, 'diff' (lowest − highest), 'diff_se'} (empty if
    fewer than 4 heads, or if either pair empties a layer)."""
    heads = model.heads
    correct = lambda pruned: {k: gd_correct(model, *xi_sets[k], head_path_mask(heads, pruned, rescale), paths=True)
                              for k in names}
    se = lambda c: {k: standard_error(acc, len(c[k])) for k, acc in set_accuracies(c).items()}
    order = sorted([(l, h) for l in range(len(heads)) for h in range(heads[l])], key=lambda lh: scores[lh])
    base = correct([])
    curve, curve_se = [set_accuracies(base)], [se(base)]
    for n in range(1, len(order) + 1):
        if any(sum(1 for l, _ in order[:n] if l == layer) == H for layer, H in enumerate(heads)):
            break
        c = correct(order[:n])
        curve.append(set_accuracies(c))
        curve_se.append(se(c))
    drop, drop_se = {}, {}
    for lh in sorted(order):
        c = correct([lh])
        drop[lh] = {k: base[k].double().mean().item() - c[k].double().mean().item() for k in names}
        drop_se[lh] = {k: paired_se(base[k], c[k]) for k in names}
    two = {}
    picks = {'lowest': order[:2], 'highest': order[-2:]}
    empties = lambda pruned: any(sum(1 for l, _ in pruned if l == layer) == H for layer, H in enumerate(heads))
    if len(order) >= 4 and not any(empties(p) for p in picks.values()):
        cs = {w: correct(p) for w, p in picks.items()}
        two = {w: dict(heads=[head_label(*lh) for lh in picks[w]], acc=set_accuracies(cs[w]), se=se(cs[w]))
               for w in picks}
        two['diff'] = {k: two['lowest']['acc'][k] - two['highest']['acc'][k] for k in names}
        two['diff_se'] = {k: paired_se(cs['lowest'][k], cs['highest'][k]) for k in names}
    return dict(order=order, curve=curve, curve_se=curve_se, drop=drop, drop_se=drop_se, two=two)


def plot_oneshot(res, out_dir, tag=''):
    """Paper 3's Fig. 3b (accuracy against N, NUTS points if sampled), 3c (U: theory, sampled, gradient descent),
    3d (kernel-PC overlaps with the labels) and 3e/f (head scores against pruning drops, accuracy after pruning;
    Fig. 7 for other head counts) from the `oneshot` command's results, as paths_oneshot_{accuracy,U,alignment,
    pruning}<tag>.png in out_dir."""
    plt = pyplot()
    cfg, theory, n = res['config'], res['theory'], res['n_episodes']
    Ns = sorted(cfg['widths'])
    title = f"L={len(cfg['heads'])}, H={cfg['heads'][0]}, P={cfg['P']}"
    fig, ax = plt.subplots(figsize=(4.6, 3.3))
    for k, c in zip(ONESHOT_SETS, 'bgm'):
        acc = np.array([theory[str(N)][k] for N in Ns])
        ax.errorbar(Ns, acc, yerr=[standard_error(a, n[k]) for a in acc], fmt=c + '-x', ms=5, capsize=2,
                    label=f'theory {k}')
        ax.axhline(theory['GP'][k], color=c, ls='--', lw=0.8)
        if res.get('nuts'):
            ax.plot([res['nuts']['N']], [res['nuts']['acc'][k]], 'ko', ms=4,
                    label='NUTS samples' if k == ONESHOT_SETS[0] else None)
    ax.set_xscale('log')
    ax.set_xlabel('N')
    ax.set_ylabel('test accuracy')
    ax.set_title(f'one-shot, {title} (dashed: GP limit)', fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, os.path.join(out_dir, f'paths_oneshot_accuracy{tag}.png'))
    U_gd = np.array(res['U_gd'])
    Us = {f"theory N={res['U_theory_N']}": res['U_theory']}
    if res.get('nuts'):
        Us[f"sampled N={res['nuts']['N']}"] = res['nuts']['U_sampled']
    Us['gradient descent (÷max)'] = U_gd / np.abs(U_gd).max()
    plot_U_grid(Us, path_names(cfg['heads']), os.path.join(out_dir, f'paths_oneshot_U{tag}.png'),
                f'order parameter by path, {title}', own_scale=('gradient descent (÷max)',))
    plot_alignment(res['alignment'], os.path.join(out_dir, f'paths_oneshot_alignment{tag}.png'), 4.4,
                   f'one-shot kernel-task alignment, {title}')
    labels = list(res['head_scores'])
    fig, axes = plt.subplots(1, 2, figsize=(max(8.5, 0.45 * len(labels) + 5), 3.0))
    xs = np.arange(len(labels))
    drops = np.array([res['prune_drop'][lab]['omniglot'] for lab in labels])
    drop_se = np.array([res['prune_drop_se'][lab]['omniglot'] for lab in labels])
    scale = max(1e-9, np.abs(drops).max())
    axes[0].bar(xs - 0.2, [res['head_scores'][lab] for lab in labels], 0.4, color='b', label='head score (theory)')
    axes[0].bar(xs + 0.2, drops / scale, 0.4, yerr=drop_se / scale, color='r', capsize=2,
                label=f'Omniglot accuracy drop (÷{scale:.3f})')
    axes[0].set_xticks(xs)
    axes[0].set_xticklabels(labels, fontsize=7)
    axes[0].set_xlabel('head (layer.head)')
    axes[0].legend(fontsize=7)
    curve, curve_se = res['prune_curve'], res['prune_curve_se']
    for k, c in zip(ONESHOT_SETS, 'bgm'):
        axes[1].errorbar(range(len(curve)), [p[k] for p in curve], yerr=[p[k] for p in curve_se], fmt=c + '.-',
                         capsize=2, label=k)
    axes[1].set_xlabel('heads pruned (lowest score first)')
    axes[1].set_ylabel('accuracy')
    axes[1].legend(fontsize=7)
    fig.suptitle(f'head pruning, {title}', fontsize=9)
    save_figure(fig, os.path.join(out_dir, f'paths_oneshot_pruning{tag}.png'))


def print_oneshot(res):
    """The accuracy, head-score and pruning tables of the `oneshot` command's results (± standard errors)."""
    theory, gd, gd_se, n = res['theory'], res['gd'], res['gd_se'], res['n_episodes']
    pm = lambda a, k: f"{a:.3f} ± {standard_error(a, n[k]):.3f}"
    print("\nepisodes: " + ", ".join(f"{k} {v}" for k, v in n.items()))
    print(f"\n| {'N':>6s} | tau | Omniglot | MNIST 0/1 | Fashion 0/1 |")
    for key in ['GP'] + [str(N) for N in res['config']['widths']]:
        r = theory[key]
        print(f"| {key:>6s} | {r['tau']} | " + " | ".join(pm(r[k], k) for k in ONESHOT_SETS) + " |")
    print("| GD model | - | " + " | ".join(f"{gd[k]:.3f} ± {gd_se[k]:.3f}" for k in ONESHOT_SETS) + " |")
    if res.get('fw_gain'):
        print("\n| N | finite width − GP limit (paired): Omniglot | MNIST 0/1 | Fashion 0/1 |")
        for N, g in res['fw_gain'].items():
            e = res['fw_gain_se'][N]
            print(f"| {N} | " + " | ".join(f"{g[k]:+.3f} ± {e[k]:.3f}" for k in ONESHOT_SETS) + " |")
    if res.get('nuts'):
        nt = res['nuts']
        print(f"| NUTS N={nt['N']} | {nt['tau']} | " + " | ".join(pm(nt['acc'][k], k) for k in ONESHOT_SETS) + " |")
    print("\n| head | score (theory) | score (GD weights) | Omniglot drop | MNIST drop | Fashion drop |")
    for lab, score in res['head_scores'].items():
        d, e = res['prune_drop'][lab], res['prune_drop_se'][lab]
        print(f"| {lab} | {score:.3f} | {res['head_scores_gd'][lab]:.3f} | "
              + " | ".join(f"{d[k]:+.3f} ± {e[k]:.3f}" for k in ONESHOT_SETS) + " |")
    print("\n| pruned | heads | Omniglot | MNIST | Fashion |")
    for i, (p, e) in enumerate(zip(res['prune_curve'], res['prune_curve_se'])):
        print(f"| {i} | {','.join(res['prune_order'][:i]) or '-'} | "
              + " | ".join(f"{p[k]:.3f} ± {e[k]:.3f}" for k in ONESHOT_SETS) + " |")
    two = res['prune_two']
    if two:
        print("\n| pruned | heads | " + " | ".join(ONESHOT_SETS) + " |")
        for w in ('lowest', 'highest'):
            print(f"| two {w}-scoring | {','.join(two[w]['heads'])} | "
                  + " | ".join(f"{two[w]['acc'][k]:.3f} ± {two[w]['se'][k]:.3f}" for k in ONESHOT_SETS) + " |")
        print("| lowest − highest (paired) | | "
              + " | ".join(f"{two['diff'][k]:+.3f} ± {two['diff_se'][k]:.3f}" for k in ONESHOT_SETS) + " |")

# ----------------------------------------------------------------------------- the commands


def hmc(out_dir='out/paths',          # results.json and PNGs go here (nuts.json there adds the NUTS point)
        seed=0,                       # data and random heads
        P=100,                        # training examples (half per class)
        P_test=1000,                  # test examples
        T=30,                         # chain length (tokens, BOS excluded)
        N0_feat=200,                  # feature dimension; a token has N0_feat + T + 1 coordinates (one-hot position)
        tau=0.01,                     # Gibbs temperature
        beta=10.0,                    # softmax hardness of every designed head
        sigma_par=1.0,                # noise in the plane of v_+, v_-
        sigma_perp=1.0,               # noise off that plane (Fig. 2e: 5.0)
        two_paths=False,              # Fig. 2e: the network of the good and denoising paths only
        denoise_head='random',        # layer-1 head 2: 'random' (Fig. 2) or 'uniform', W = 0 (Fig. 5c)
        widths=(10, 30, 50, 100, 300, 500, 1000),   # the N swept by the finite-width theory
        lr=0.1,                       # Adam learning rate on the Cholesky factors of U (App. E)
        tol=1e-5,                     # stop when the largest gradient entry is below this
        max_iters=20000):             # most Adam steps per minimisation
    """Fig. 2 and 5b/c of paper 3 (App. G): GP accuracy of sub-networks, finite-width theory over N, U, kernels."""
    require(len(widths) > 0 and min(widths) >= 1, f"widths must be positive, got {widths}")
    hmc_checks(seed, P, P_test, T, N0_feat, tau, beta, sigma_par, sigma_perp, denoise_head, lr, max_iters, 4, out_dir)
    net = 'good+denoise' if two_paths else 'all'
    d = hmc_setup(P, P_test, seed, T, N0_feat, sigma_par, sigma_perp, beta, denoise_head=denoise_head)
    idx, heads = d['nets'][net]
    print(f"HMC task: P={P}, P*={P_test}, T={T}, N0={d['xi_tr'].shape[-1]}, tau={tau}, sigma_par={sigma_par}, "
          f"sigma_perp={sigma_perp}, network '{net}' heads={heads}, paths={[HMC_PATHS[i] for i in idx]}, "
          f"{denoise_head} denoising head")
    res = hmc_theory(d, net, widths, tau, lr, tol, max_iters)
    print("GP limit accuracy: " + ", ".join(f"{k} {v:.3f}" for k, v in res['gp'].items()))
    res['config'] = dict(P=P, P_test=P_test, T=T, N0_feat=N0_feat, tau=tau, beta=beta, sigma_par=sigma_par,
                         sigma_perp=sigma_perp, denoise_head=denoise_head, seed=seed, lr=lr, tol=tol,
                         max_iters=max_iters)
    save_json(res, os.path.join(out_dir, 'results.json'))
    plot_hmc(res, out_dir, nuts_point(os.path.join(out_dir, 'nuts.json'), net, denoise_head))
    N_small = min(widths)
    plot_hmc_kernels(d, net, res['U'][N_small], N_small,
                     os.path.join(out_dir, f'paths_hmc_kernels{hmc_tag(net, denoise_head)}.png'))
    print_hmc(res)
    print(f"results and figures in {out_dir}/")
    return res


def nuts(out_dir='out/paths',         # nuts.json and paths_nuts_U.png go here (`hmc` plots the point from it)
         seed=0,                      # data, random heads and the sampler
         P=100,                       # training examples (half per class)
         P_test=1000,                 # test examples
         T=30,                        # chain length (tokens, BOS excluded)
         N0_feat=200,                 # feature dimension
         tau=0.01,                    # Gibbs temperature
         beta=10.0,                   # softmax hardness of every designed head
         sigma_par=1.0,               # noise in the plane of v_+, v_-
         sigma_perp=1.0,              # noise off that plane
         two_paths=False,             # sample the good+denoise network instead of all four paths
         denoise_head='random',       # layer-1 head 2: 'random' or 'uniform' (W = 0)
         N=10,                        # width of the sampled network
         warmup=200,                  # NUTS warm-up steps
         samples=400,                 # NUTS samples (one chain)
         max_tree_depth=8,            # NUTS tree depth limit
         lr=0.1,                      # Adam learning rate of the theory's minimisation
         tol=1e-5,                    # its stopping gradient
         max_iters=20000):            # its most steps
    """App. F of paper 3: NUTS samples of the HMC network's weights at width N against the theory (needs pyro-ppl)."""
    require(N >= 1 and warmup >= 0 and samples >= 1, f"need N, samples >= 1, warmup >= 0, got {N}, {samples}, {warmup}")
    at_least(1, max_tree_depth=max_tree_depth)
    require(N < 2 ** 20, f"--N must be below 2^20 (NUTS samples N x N0 weights per head), got {N}")
    if importlib.util.find_spec('pyro') is None:
        fail("bayes_paths.py nuts needs pyro-ppl (pip install pyro-ppl), an optional dependency")
    hmc_checks(seed, P, P_test, T, N0_feat, tau, beta, sigma_par, sigma_perp, denoise_head, lr, max_iters, 4, out_dir,
               N=N)
    net = 'good+denoise' if two_paths else 'all'
    d = hmc_setup(P, P_test, seed, T, N0_feat, sigma_par, sigma_perp, beta, denoise_head=denoise_head)
    res = nuts_check(d, net, N, tau, warmup, samples, max_tree_depth, seed, lr, tol, max_iters)
    res['denoise_head'] = denoise_head
    save_json(res, os.path.join(out_dir, 'nuts.json'))
    plot_U_grid({'theory': res['U_theory'], 'NUTS': res['U_sampled']}, res['paths'],
                os.path.join(out_dir, 'paths_nuts_U.png'), f'U at N={N}: theory vs sampled')
    print_nuts(res)
    return res


def oneshot(out_dir='out/paths-oneshot',   # results.json and PNGs go here
            seed=0,                   # model init and episodes
            device='cpu',             # the gradient-descent model's device; the theory runs in float64 on the CPU
            data_dir='data',          # holds omniglot/images_{background,evaluation}.npz, mnist/ and fashion-mnist/
                                      # (t10k idx .gz files)
            n_embd=512,               # N of the gradient-descent model
            qk_dim=128,               # G, the query-key dimension
            heads=4,                  # H, heads per layer
            layers=2,                 # L, attention layers
            param='torch',            # 'torch': the authors' nn.Linear weights and init;
                                      # 'ntk': N(0,1) times 1/sqrt(fan_in)
            gd_steps=4000,            # Adam steps of the gradient-descent model (paper: 41,250)
            gd_batch=128,             # fresh training episodes per step
            gd_lr=3e-4,               # Adam learning rate (the paper's)
            gd_max_minutes=0.0,       # stop training after this many minutes of wall clock (0: no limit)
            eval_every=250,           # steps between validation checks; the best checkpoint is kept
            n_eval=4000,              # Omniglot episodes per validation and test set (MNIST/Fashion: every 0/1 image)
            load='',                  # a gd_model.pt saved by save_model: skip training and use that model
            save_model='',            # write the trained model (state dict and its settings) to this .pt path
            P=600,                    # training episodes of the theory (the paper's)
            widths=(10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000),   # the N of the theory (the paper's)
            taus=(0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5),  # tau grid, chosen per N on validation
            optimizer='lbfgs',        # the action's minimiser: 'lbfgs' or 'adam' (the authors')
            lr=0.1,                   # Adam learning rate of the theory's minimisation
            tol=1e-5,                 # its stopping gradient
            max_iters=20000,          # its most steps
            nuts_samples=0,           # > 0: NUTS samples of the theory network at the smallest N (Fig. 3b/3c points)
            nuts_warmup=200,          # their warm-up steps
            nuts_tree_depth=6,        # NUTS tree depth limit
            tag=''):                  # suffix of the PNG names (paths_oneshot_accuracy<tag>.png)
    """Fig. 3 of paper 3 (§4.2, App. H; Figs. 6, 7 with other heads/layers): GD model on Omniglot, theory on its Q/K
    over N, ID/OOD accuracy, kernel alignment, head pruning."""
    require(heads >= 1 and layers >= 1, f"need heads, layers >= 1, got {heads}, {layers}")
    require(min(n_embd, qk_dim, gd_steps, gd_batch, eval_every, n_eval) >= 1,
            "n_embd, qk_dim, gd_steps, gd_batch, eval_every and n_eval must be at least 1")
    at_least(1, max_iters=max_iters, nuts_tree_depth=nuts_tree_depth)
    require(re.fullmatch(r'[\w.+-]*', tag),
            f"--tag must be letters, digits, _ . + or - (it ends file names), got {tag!r}")
    at_least(0, nuts_warmup=nuts_warmup, gd_max_minutes=gd_max_minutes)
    rates(gd_lr=gd_lr, lr=lr)
    n, T, N0 = path_count(heads, layers), 48, PATCH * PATCH
    fits(4 * layers * heads * 2 * qk_dim * n_embd + 4 * 8 * gd_batch * T * n_embd * (heads + 2) * layers
         + 8 * (P * P * n * n + 2 * n_eval * P * n + (P + 4 * n_eval) * (n * N0 + T * N0)),
         f"--n_embd={n_embd} --qk_dim={qk_dim} --heads={heads} --layers={layers} --gd_batch={gd_batch} --P={P} "
         f"--n_eval={n_eval}", "the one that is larger than meant")
    try:
        if load:
            input_file(load, 'load')
        if save_model:
            output_file(save_model, 'save_model')
    except ValueError as e:
        fail(e)
    common(seed, out_dir=out_dir)
    require(param in PARAMS, f"param must be one of {', '.join(PARAMS)}, got {param!r}")
    require(optimizer in OPTIMIZERS, f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {optimizer!r}")
    require(P >= 2, f"P must be at least 2, got {P}")
    require(len(widths) > 0 and min(widths) >= 1, f"widths must be positive, got {widths}")
    require(len(taus) > 0 and min(taus) > 0, f"taus must be positive, got {taus}")
    require(nuts_samples == 0 or importlib.util.find_spec('pyro') is not None,
            "nuts_samples > 0 needs pyro-ppl (pip install pyro-ppl), an optional dependency")
    dev = checked_device(device)
    try:
        data = oneshot_data(data_dir, n_eval, seed)
    except FileNotFoundError as e:
        fail(f"missing data file {e.filename} (data_dir={data_dir} must hold {', '.join(ONESHOT_FILES)})")
    N0 = data['train'][0].shape[-1]
    if load:
        try:
            ckpt = torch.load(load, map_location='cpu')
            arch = ckpt['arch']
            n_embd, qk_dim, param, shape = arch['n_embd'], arch['qk_dim'], arch['param'], tuple(arch['heads'])
            model = PathsNet(N0, n_embd, qk_dim, shape, param)
            model.load_state_dict(ckpt['state_dict'])
        except Exception as e:                  # any unpickling, missing key or shape error: not such a file
            fail(f"--load={load} is not a model written by --save_model: {cause(e)}")
        model = model.to(dev).eval()
        train_info = ckpt['train']
        print(f"one-shot: GD model from {load}: N={n_embd}, G={qk_dim}, heads={shape}, param={param}, "
              f"{train_info['steps']} steps, best val at step {train_info['best_step']}")
    else:
        shape = (heads,) * layers
        print(f"one-shot: GD model N={n_embd}, G={qk_dim}, heads={shape}, N0={N0}, T=48, param={param}, "
              f"{gd_steps} steps × batch {gd_batch}, Adam {gd_lr}")
        model, train_info = train_gd_model(data['train'], data['sets']['val'], shape, n_embd, qk_dim, gd_steps,
                                           gd_batch, gd_lr, eval_every, seed, dev, param, gd_max_minutes)
        if save_model:
            torch.save(dict(state_dict=model.state_dict(), train=train_info,
                            arch=dict(n_embd=n_embd, qk_dim=qk_dim, param=param, heads=list(shape))), save_model)
    sets = data['sets']
    n = {k: len(y) for k, (x, y) in sets.items()}
    gd_c = {k: gd_correct(model, *sets[k]) for k in sets}
    gd = set_accuracies(gd_c)
    gd_se = {k: standard_error(gd[k], n[k]) for k in sets}
    print("GD model (best val checkpoint): " + ", ".join(f"{k} {v:.3f} ± {gd_se[k]:.3f}" for k, v in gd.items()))
    th = oneshot_theory(model, data['train'], sets, P, widths, taus, seed, lr, tol, max_iters, optimizer)
    theory, N_small = th['theory'], min(widths)
    U = th['U'][N_small]
    V0, Vs, a = model.weights()
    U_gd = order_parameter_from_weights(a.detach().cpu().double(), [V.detach().cpu().double() for V in Vs])
    scores, scores_gd = head_scores(U, shape), head_scores(U_gd, shape)     # Fig. 3e/f: theory's U at the smallest N
    with torch.no_grad():
        xi_gd = {k: (torch.cat([model.path_inputs(xb.to(dev)).cpu() for xb in x.split(500)]), y)
                 for k, (x, y) in sets.items()}
    pr = prune_heads(model, xi_gd, scores)
    label = lambda d: {head_label(*lh): v for lh, v in d.items()}
    res = dict(gd_acc=gd['omniglot'], gp_acc=theory['GP']['omniglot'],
               fw_acc={str(N): theory[N]['omniglot'] for N in widths},
               fw_gain={str(N): th['gain'][N] for N in widths}, fw_gain_se={str(N): th['gain_se'][N] for N in widths},
               n_episodes=n, gd=gd, gd_se=gd_se, gd_train=train_info,
               theory={str(k): v for k, v in theory.items()},
               tau_scan={str(k): {str(t): a for t, a in v.items()} for k, v in th['tau_scan'].items()},
               U_theory_N=N_small, U_theory=U.tolist(), U_gd=U_gd.tolist(), alignment=th['alignment'],
               head_scores={head_label(*lh): scores[lh] for lh in pr['drop']},
               head_scores_gd={head_label(*lh): scores_gd[lh] for lh in pr['drop']},
               prune_drop=label(pr['drop']), prune_drop_se=label(pr['drop_se']),
               prune_order=[head_label(*lh) for lh in pr['order']], prune_curve=pr['curve'],
               prune_curve_se=pr['curve_se'], prune_two=pr['two'],
               config=dict(n_embd=n_embd, qk_dim=qk_dim, heads=shape, param=param, gd_steps=gd_steps,
                           gd_batch=gd_batch, gd_lr=gd_lr, load=load, P=P, n_eval=n_eval, widths=widths, taus=taus,
                           optimizer=optimizer, seed=seed))
    if nuts_samples > 0:
        res['nuts'] = oneshot_nuts(th, N_small, shape, nuts_warmup, nuts_samples, seed, nuts_tree_depth)
    save_json(res, os.path.join(out_dir, 'results.json'))
    plot_oneshot(res, out_dir, tag)
    print_oneshot(res)
    print(f"results and figures in {out_dir}/")
    return res


def timing(P=600,                     # training examples (the one-shot theory's)
           heads=4,                   # heads per layer
           layers=2,                  # layers: |Π| = heads**layers paths
           N0=64,                     # input dimension (the one-shot tokens')
           N=10,                      # width in the action
           tau=0.5,                   # temperature
           repeats=20,                # timed steps per variant (the median is printed)
           threads=1,                 # torch threads
           seed=0):                   # random attentioned inputs and labels
    """Milliseconds per action-gradient step (paper 3, eqs. 11-12) from path kernels C against contracting ξ."""
    at_least(1, P=P, heads=heads, layers=layers, N0=N0, N=N, repeats=repeats)
    rates(tau=tau)
    common(seed, threads)
    n = path_count(heads, layers)
    shape = (heads,) * layers
    fits(8 * (P * n * N0 + P * P * n * n), f"--P={P} --heads={heads} --layers={layers} --N0={N0}: xi and the path "
         f"kernels C (P² |Π|² floats, |Π| = {n:,})", "--P=<n>, --heads=<n> or --layers=<n>")
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(seed)
    xi = torch.randn(P, n, N0, generator=g, dtype=DTYPE)
    Y = torch.sign(torch.randn(P, generator=g, dtype=DTYPE))
    t0 = time.perf_counter()
    C = path_kernels(xi)
    build = time.perf_counter() - t0
    Ls = [(torch.linalg.cholesky(U) + 0.01 * torch.randn(U.shape, generator=g, dtype=DTYPE).tril()).requires_grad_(True)
          for U in gp_order_parameters(shape)]
    grads = {}

    def step(source, closed):
        Us = [torch.tril(Lf) @ torch.tril(Lf).T for Lf in Ls]
        S = entropy(Us, shape) + energy(training_kernel(Us[0], source), Y, tau, closed) / N
        for Lf in Ls:
            Lf.grad = None
        S.backward()
        return S.item(), torch.cat([Lf.grad.flatten() for Lf in Ls])

    variants = {'C, autograd energy (before)': (C, False), 'C, closed-form energy gradient': (C, True),
                'xi, autograd energy': (xi, False), 'xi, closed-form energy gradient (after)': (xi, True)}
    print(f"P={P}, |Π|={n} (heads {shape}), N0={N0}, {threads} thread(s); C: {C.numel() * 8 / 2 ** 20:.0f} MiB, "
          f"built in {build * 1000:.0f} ms")
    ms = {}
    for name, (source, closed) in variants.items():
        grads[name] = step(source, closed)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            step(source, closed)
            times.append(time.perf_counter() - t0)
        ms[name] = 1000 * float(np.median(times))
        print(f"  {name:42s} {ms[name]:8.1f} ms per step (median of {repeats})")
    S0, g0 = grads['C, autograd energy (before)']
    for name, (S, gr) in grads.items():
        print(f"  {name:42s} |ΔS|/|S| {abs(S - S0) / abs(S0):.1e}, max|Δgrad|/max|grad| "
              f"{(gr - g0).abs().max().item() / g0.abs().max().item():.1e}")
    return dict(ms=ms, C_build_ms=1000 * build, C_MiB=C.numel() * 8 / 2 ** 20)


def main(argv=None):
    """Run one of the commands (`python -m experiments.paper3 CMD ...`, or `python bayes_paths.py CMD ...`)."""
    return run_command(dict(hmc=hmc, nuts=nuts, oneshot=oneshot, timing=timing), argv, doc=__doc__)
