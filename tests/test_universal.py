"""Claims of paper 2 (Fixed Universal Transformers) that universal.py implements, checked in float64."""
import math
import os
import sys
import time

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
import universal as u  # noqa: E402
from configurator import run_command, train_keys  # noqa: E402
from experiments.paper2 import runs as paper2  # noqa: E402

TOL = 1e-9


def universal_config(H, L, d_in, d, m, block_size, **flags):
    """model.GPTConfig of UTF^m_{H,L,d_in,d} (universal.py, section 7); flags (residual, norm, looped, ...) pass
    through."""
    from model import GPTConfig
    return GPTConfig(variant='universal', n_layer=L, n_head=H, n_embd=m, head_dim=d, vocab_size=d_in,
                     block_size=block_size, **flags)


pytestmark = pytest.mark.usefixtures('one_thread')      # many tiny float64 ops: one thread is fastest


@pytest.mark.parametrize('construction', u.CONSTRUCTIONS)
@pytest.mark.parametrize('H', [1, 2, 3])
@pytest.mark.parametrize('L', [1, 2, 3])
@pytest.mark.parametrize('causal', [False, True])
def test_construction_is_exact(construction, H, L, causal):
    """Thm 3.1-3.4: UTF(X E) = T(X) for a random target, with one E for lengths 1..9."""
    W = u.random_target(H, L, d_in=3, d=2, seed=100 * H + 10 * L + causal)
    R, E, _ = u.construct(construction, W, seed=7)
    assert u.max_rel_error(W, R, E, causal, lengths=[1, 2, 5, 9]) < TOL


@pytest.mark.parametrize('construction', u.CONSTRUCTIONS)
def test_one_E_serves_every_length(construction):
    """E is built from the target's weights alone, so it must serve n from 1 to 40 unchanged, causal or not."""
    W = u.random_target(2, 2, d_in=4, d=3, seed=3)
    R, E, _ = u.construct(construction, W, seed=4)
    for causal in (False, True):
        assert u.max_rel_error(W, R, E, causal, lengths=[1, 2, 3, 5, 8, 13, 21, 34, 40], batch=2) < TOL


def test_fixed_weights_are_sparse_01_and_target_independent():
    """Thm 3.1/3.2: {0,1} entries, at most m nonzeros per matrix, and the same R for every target."""
    for build in (u.sparse_weights, u.identity_weights, u.looped_weights):
        R = build(3, 2, 3, 2)
        m = R['U'].shape[0]
        for k, T in R.items():
            assert set(T.unique().tolist()) <= {0.0, 1.0}
            mats = T.reshape(-1, *T.shape[-2:])
            assert all(int(A.count_nonzero()) <= m for A in mats), k
    looped = u.looped_weights(2, 3, 3, 2)
    assert all(torch.equal(looped[k][0], looped[k][l]) for k in ('R_Q', 'R_K', 'R_V') for l in range(3))
    W1, W2 = u.random_target(2, 2, 3, 2, seed=1), u.random_target(2, 2, 3, 2, seed=2)
    assert all(torch.equal(a, b) for a, b in zip(u.construct('sparse', W1)[0].values(),
                                                 u.construct('sparse', W2)[0].values()))


@pytest.mark.parametrize('H, L, d_in, d', [(2, 3, 30, 4), (3, 2, 4, 3), (1, 3, 7, 1), (4, 2, 4, 2)])
def test_routing_moves_every_block_off_its_own_coordinates(H, L, d_in, d):
    """App. A.2: R_V^{l,h} routes each block into another block's coordinates -- no nonzero inside any block's
    own diagonal square -- and the routed construction is still exact, also where d_in > 2Hd (leaves rising
    through wider internal blocks). The looped construction's tied R_V routes the same way; the identity
    reading is the contrast: every nonzero of its R_V is on the diagonal."""
    W = u.random_target(H, L, d_in, d, seed=H + L + d_in)
    for construction, blocks in (('sparse', u.sparse_layout(H, L, d_in, d)),
                                 ('looped', {q: i * (2 * d + d_in) for q, i in u.looped_layout(H, L).items()})):
        R, E, _ = u.construct(construction, W)
        starts = sorted(blocks.values()) + [R['U'].shape[0]]
        R_V = R['R_V']
        assert R_V.count_nonzero() > 0
        for a, b in zip(starts, starts[1:]):
            assert R_V[..., a:b, a:b].count_nonzero() == 0, (construction, a, b)
        assert u.max_rel_error(W, R, E, True, [1, 3, 6]) < TOL
    R = u.identity_weights(H, L, d_in, d)
    assert torch.equal(R['R_V'], torch.diag_embed(torch.diagonal(R['R_V'], dim1=-2, dim2=-1)))


def test_routing_needs_no_more_nonzeros_than_the_identity_reading():
    """Per matrix, the routed R_V^{l,h} moves what the identity reading keeps at layer 1, and less below: the
    heads' outputs share the routed coordinates, where the identity reading keeps every path apart."""
    for H, L, d_in, d in ((2, 3, 3, 2), (3, 2, 4, 3), (2, 2, 5, 3)):
        routed, kept = u.sparse_weights(H, L, d_in, d)['R_V'], u.identity_weights(H, L, d_in, d)['R_V']
        n = lambda R: [[int(R[l, h].count_nonzero()) for h in range(H)] for l in range(L)]
        assert n(routed)[0] == n(kept)[0]
        assert all(a <= b for ra, rb in zip(n(routed), n(kept)) for a, b in zip(ra, rb))


def test_a_broken_construction_is_caught():
    """The exactness check can fail: one flipped routing entry, or a perturbed E, gives a visible error."""
    W = u.random_target(2, 2, d_in=3, d=2, seed=5)
    R, E, _ = u.construct('sparse', W)
    R['R_V'][0, 1] = R['R_V'][0, 0]                      # head 2 of layer 1 routes like head 1
    assert u.max_rel_error(W, R, E, False, [4, 7]) > 1e-3
    R, E, _ = u.construct('looped', W)
    assert u.max_rel_error(W, R, E + 1e-4 * torch.randn_like(E), True, [4, 7]) > 1e-7


def test_dims_reproduce_the_papers_embedding_sizes():
    """m̄ = 456, 1024, 2280 (H=2, d_in=30, d=28,28,30, L=2,3,4) and 1024 (H=4, L=2, d=24, d_in=4)."""
    assert [u.m_bar(2, L, 30, d) for L, d in ((2, 28), (3, 28), (4, 30))] == [456, 1024, 2280]
    assert u.m_bar(4, 2, 4, 24) == 1024
    for H, L, d_in, d in ((1, 1, 3, 2), (1, 3, 5, 2), (2, 3, 3, 2), (3, 2, 4, 3)):
        M = u.M_all(H, L, d_in, d)
        assert u.identity_weights(H, L, d_in, d)['U'].shape[0] == M == u.R_all(u.identity_weights(H, L, d_in, d)).shape[1]
        assert u.sparse_weights(H, L, d_in, d)['U'].shape[0] == u.m_sparse(H, L, d_in, d) >= M
        assert (u.m_sparse(H, L, d_in, d) == M) == (d_in <= 2 * H * d)     # leaves rise through 2Hd-wide blocks
        assert u.m_sparse(H, L, d_in, d) <= u.m_bar(H, L, d_in, d) or H > 1
        assert u.looped_weights(H, L, d_in, d)['U'].shape[0] == u.m_looped(H, L, d_in, d)
        assert M <= u.m_bar(H, L, d_in, d) and (H == 1 or M == u.m_bar(H, L, d_in, d))
        assert u.m_looped(H, L, d_in, d) > u.m_bar_looped(H, L, d_in, d)


@pytest.mark.parametrize('looped', [False, True])
def test_random_system_has_no_exact_solution_below_M(looped):
    """App. B/D rank argument: R_all is m×M, so for m < M its rank is ≤ m < M and E R_all = W_all (M equations
    per row of E) has no solution for a generic target; at m = M it is solvable exactly."""
    H, L, d_in, d = 2, 2, 3, 2
    M, W = u.M_all(H, L, d_in, d), u.random_target(H, L, d_in, d, seed=11)
    for m in (M - 1, M - 5):
        R = u.random_weights(H, L, d_in, d, m, looped=looped, seed=12)
        assert torch.linalg.matrix_rank(u.R_all(R)).item() == m < M
        E, residual = u.solve_E(W, R)
        assert residual > 1e-3
        assert u.max_rel_error(W, R, E, False, [5, 9]) > 1e-3
    R = u.random_weights(H, L, d_in, d, M, looped=looped, seed=12)
    assert torch.linalg.matrix_rank(u.R_all(R)).item() == M
    E, residual = u.solve_E(W, R)
    assert residual < 1e-10 and u.max_rel_error(W, R, E, False, [5, 9]) < TOL


@pytest.mark.parametrize('construction', ['sparse', 'looped', 'random'])
def test_float64_utf_matches_model_gpt(construction):
    """model.py's GPT with the universal flags, loaded with a construction, is utf_forward on one-hot tokens."""
    H, L, d_in, d = 2, 2, 5, 3
    W = u.random_target(H, L, d_in, d, seed=21)
    R, E, _ = u.construct(construction, W, seed=22)
    m = E.shape[1]
    torch.manual_seed(0)
    model = universal_config(H, L, d_in, d, m, block_size=16, looped=construction == 'looped')
    from model import GPT
    gpt = u.load_construction(GPT(model).double(), R, E).eval()      # eval mode returns the full logits
    idx = torch.randint(0, d_in, (3, 16))
    logits, _ = gpt(idx, targets=torch.zeros_like(idx))
    X = torch.nn.functional.one_hot(idx, d_in).double()
    ref = u.utf_forward(X, E, R, causal=True)
    assert (logits - ref).abs().max() <= TOL * ref.abs().max()
    # and with it, the model computes the target transformer on one-hot inputs
    assert (logits - u.target_forward(X, W, causal=True)).abs().max() <= TOL * ref.abs().max()
    trainable = {n for n, p in gpt.named_parameters() if p.requires_grad}
    assert trainable == {'transformer.wte.weight', 'lm_head.weight'}


def test_training_only_E_and_U_learns_dyck():
    """Paper 2 §5: with R_Q, R_K, R_V fixed by the sparse construction (+ residual and frozen LayerNorm), AdamW on
    E (wte) and U (lm_head) alone brings the test loss of a small Dyck-1 set from ln 4 below ln 2, the best loss
    that ignores the input (two balanced labels); every other weight stays as it was."""
    import numpy as np
    import tasks
    from model import GPT
    data = tasks.make_task('dyck1', min_len=2, max_len=12, n_test=512, format='last')
    xt, yt = map(torch.from_numpy, data.eval_set())
    H, L, d = 2, 2, 4
    torch.manual_seed(0)
    gpt = GPT(universal_config(H, L, 4, d, u.M_all(H, L, 4, d), data.block_size, residual=True, norm='layer'))
    u.load_construction(gpt, u.sparse_weights(H, L, 4, d), U=False)
    frozen = {n: p.detach().clone() for n, p in gpt.named_parameters() if not p.requires_grad}
    opt = torch.optim.AdamW([p for p in gpt.parameters() if p.requires_grad], lr=3e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda it: 1 - it / 100)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        loss0 = gpt(xt, yt)[1].item()
    for _ in range(100):
        x, y = map(torch.from_numpy, data.get_batch(32, rng))
        loss = gpt(x, y)[1]
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    with torch.no_grad():
        loss1 = gpt(xt, yt)[1].item()
    assert loss0 > 1.2 and loss1 < 0.62 < math.log(2)
    assert all(torch.equal(p, frozen[n]) for n, p in gpt.named_parameters() if n in frozen)
    assert set(frozen) >= {'transformer.h.0.attn.c_v.weight', 'transformer.h.1.ln_1.weight'}


def test_command_line(capsys):
    """`dims` prints the paper's sizes; `verify` exits 0 when exact, 1 below M, and one line on a bad flag."""
    commands = dict(verify=u.verify, dims=u.dims)
    run_command(commands, ['dims'])
    out = capsys.readouterr().out
    assert all(f' {m} ' in out for m in ('456', '1024', '2280'))
    for args, code in ((['--construction=looped', '--causal=True', '--H=2', '--L=2'], 0),
                       (['--construction=random', '--m=39'], 1)):            # M = 52 for the default sizes
        with pytest.raises(SystemExit) as e:
            run_command(commands, ['verify', *args])
        assert e.value.code == code
    assert 'FAIL' in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        run_command(commands, ['verify', '--heads=2'])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and err == ["error: unknown config key 'heads' (in '--heads=2')"]
    for flag, message in (('--H=0', '--H must be >= 1, got 0'), ('--L=-1', '--L must be >= 1, got -1'),
                          ('--n=0', '--n must be >= 1, got 0'), ('--m=-2', '--m must be >= 0')):
        with pytest.raises(SystemExit) as e:                           # each error names its key
            run_command(commands, ['verify', flag])
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and len(err) == 1 and message in err[0], err


def test_experiments_report_a_failed_run_and_go_on(monkeypatch, capsys, tmp_path):
    """A train.py run that fails is one line; the experiment's other runs still run; exit status 1."""
    done = []

    def run_one(config, model, arch, name, extra, out, results):
        done.append(name)
        if model == 'sparse':
            raise RuntimeError(f"train.py failed (2), see {out}/{name}/stdout.txt")
        return dict(iter=1, val_acc=0.5, val_loss=1.0)

    monkeypatch.setattr(paper2, 'run_one', run_one)
    with pytest.raises(SystemExit) as e:
        paper2.run(tasks=('khop1',), archs=('res_ln',), seeds=(0,), results=str(tmp_path))
    assert e.value.code == 1
    assert done == ['khop1_res_ln_sparse_seed0', 'khop1_res_ln_random_seed0', 'khop1_res_ln_full_seed0']
    out, err = capsys.readouterr()
    assert 'khop1_res_ln_sparse_seed0' in out and 'failed: train.py failed (2)' in out
    assert err.strip().splitlines() == ["error: 1 of 3 runs failed: khop1_res_ln_sparse_seed0 (each one's stdout.txt "
                                        "is "
                                        "in out/universal/cpu/)"]


def test_experiments_run_only_the_models_asked_for(monkeypatch, capsys, tmp_path):
    """--models picks sparse / random / full out of each row, in the experiment's order; another name is one
    error line (exit 2) and runs nothing."""
    ran = []
    monkeypatch.setattr(paper2, 'run_one', lambda config, model, arch, name, extra, out, results: ran.append(name) or
                        dict(iter=1, val_acc=0.5, val_loss=1.0))
    monkeypatch.setattr(paper2, 'table', lambda *args: None)
    paper2.run(tasks=('khop2',), archs=('res_ln',), seeds=(0, 1), models=('full', 'sparse'),
                  results=str(tmp_path))
    assert ran == ['khop2_res_ln_sparse_seed0', 'khop2_res_ln_sparse_seed1', 'khop2_res_ln_full_seed0',
                   'khop2_res_ln_full_seed1']
    ran.clear()
    with pytest.raises(SystemExit) as e:
        paper2.run(tasks=('khop2',), models=('frozen',), results=str(tmp_path))
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and err == ['error: models must be in sparse, random, full, sparse_identity, got frozen']
    assert not ran


def test_experiments_table_every_row_not_only_the_ones_run(monkeypatch, tmp_path):
    """Running part of an experiment ends with the table and figure of all of it that has logs (Fig. 2's every
    width after --d_list=8, Table 1's every task after --tasks=khop3), and App. F's tasks, which are not Table
    2's own rows, with their own table (after --tasks=khop3 of table2)."""
    ran, tabled = [], []
    monkeypatch.setattr(paper2, 'run_one', lambda config, model, arch, name, extra, out, results: ran.append(name) or
                        dict(iter=1, val_acc=0.5, val_loss=1.0))
    monkeypatch.setattr(paper2, 'table', lambda which, size, seeds, tasks, archs, flags, tag, scale, d_list, *rest:
                        tabled.append((which, tasks, d_list)))
    paper2.run(which='msweep', d_list=(8,), seeds=(0,), results=str(tmp_path))
    assert ran and all('_d8_' in name or '_d' not in name for name in ran)
    paper2.run(which='table1', tasks=('khop3',), archs=('attn',), seeds=(0,), results=str(tmp_path))
    paper2.run(which='table2', tasks=('khop3',), archs=('res',), seeds=(0,), results=str(tmp_path))
    paper2.run(which='table2', tasks=('khop2',), archs=('res',), seeds=(0,), results=str(tmp_path))
    assert tabled == [('msweep', (), (2, 4, 8)), ('table1', (), (2, 4, 8)), ('table2', ('khop3',), (2, 4, 8)),
                      ('table2', (), (2, 4, 8))]


def test_experiments_stop_on_sigterm(monkeypatch, capsys, tmp_path):
    """SIGTERM to the driver reaches the train.py run under way (its own session: only through the driver), no
    more runs start, and the driver exits 1 naming the unfinished runs (not a finished one it would reuse)."""
    import signal
    import subprocess
    done, children = [], []

    def run_one(config, model, arch, name, extra, out, results, start=True):
        if not start:                                         # the fully trained run has a complete log
            return dict(iter=1, val_acc=0.5, val_loss=1.0) if model == 'full' else None
        done.append(name)
        p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)
        children.append(p)
        paper2.RUNNING.add(p)
        os.kill(os.getpid(), signal.SIGTERM)                  # as `timeout` or `kill` would
        code = p.wait(timeout=30)
        paper2.RUNNING.discard(p)
        raise RuntimeError(f"train.py failed ({code}), see {out}/{name}/stdout.txt")

    monkeypatch.setattr(paper2, 'run_one', run_one)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as e:
        paper2.run(tasks=('khop1',), archs=('res_ln',), seeds=(0,), results=str(tmp_path))
    assert e.value.code == 1 and done == ['khop1_res_ln_sparse_seed0']
    assert children[0].returncode == -signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before                   # the caller's handler is back
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: stopped by SIGTERM: 2 of 3 runs unfinished or not started (khop1_res_ln_sparse_seed0, "
                   "khop1_res_ln_random_seed0); the same command continues the stopped ones from their checkpoints"]


def test_run_one_continues_a_stopped_run_exactly(tmp_path):
    """A run stopped by SIGTERM (checkpoint saved) is continued by the next run_one of the same command
    (--init_from=resume), its out dir moved elsewhere meanwhile (as a run carried to another machine is): its
    log is an uninterrupted run's, and its CPU seconds count both parts."""
    import shutil
    import signal
    import threading
    name, config, model, arch, extra, _ = paper2.experiment_runs('table1', 'cpu', (0,), tasks=('khop1',),
                                                            archs=('res_ln',))[1]
    extra = list(extra) + ['--max_iters=100', '--eval_interval=10', '--n_test=64', '--log_interval=10']
    out, results = str(tmp_path / 'out'), str(tmp_path / 'results')

    def stop_after_first_evaluation():
        log, deadline = os.path.join(out, name, 'log.jsonl'), time.time() + 300
        while not (os.path.isfile(log) and len(open(log).read().splitlines()) >= 2 and paper2.RUNNING):
            if time.time() > deadline:
                return
            time.sleep(0.05)
        os.killpg(next(iter(paper2.RUNNING)).pid, signal.SIGTERM)

    stopper = threading.Thread(target=stop_after_first_evaluation)
    stopper.start()
    with pytest.raises(RuntimeError, match='train.py failed'):
        paper2.run_one(config, model, arch, name, extra, out=out, results=results)
    stopper.join()
    first_part = float(open(os.path.join(out, name, 'cpu_s.txt')).read())
    assert first_part > 0 and not os.path.exists(os.path.join(results, name))
    moved = str(tmp_path / 'moved')
    shutil.move(out, moved)
    last = paper2.run_one(config, model, arch, name, extra, out=moved, results=results)
    stdout = open(os.path.join(moved, name, 'stdout.txt')).read()                 # both parts, appended
    assert 'stopped by SIGTERM at iteration' in stdout and '| resumed at iteration' in stdout
    resumed = paper2.read_log(os.path.join(results, name, 'log.jsonl'))
    paper2.run_one(config, model, arch, name, extra, out=str(tmp_path / 'whole'), results=str(tmp_path / 'whole_results'))
    whole = paper2.read_log(os.path.join(tmp_path, 'whole_results', name, 'log.jsonl'))
    strip = lambda records: [{k: v for k, v in r.items() if k != 'cpu_s'} for r in records]
    assert strip(resumed) == strip(whole) and resumed[-1]['iter'] == 100
    assert last['cpu_s'] > first_part
    command = open(os.path.join(results, name, 'command.sh')).read()
    assert command.startswith(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '1')} python train.py ")


def test_a_sparse_run_resumes_from_its_embeddings_alone(tmp_path):
    """train.py --construction=sparse --checkpoint_frozen=False: ckpt.pt holds E, U and the positions, not the
    construction's R_Q, R_K, R_V; checkpoint.model_from_checkpoint rebuilds every weight of it (a changed frozen
    fingerprint is refused), and resumed, the run writes the construction again and logs the uninterrupted run's
    losses."""
    import json
    import subprocess
    args = ['config/cpu/universal_khop1.py', '--construction=sparse', '--n_embd=210', '--checkpoint_frozen=False',
            '--n_test=32', '--eval_interval=4', '--log_interval=1', '--lr_decay_iters=8', '--warmup_iters=2']
    root = os.path.join(os.path.dirname(__file__), '..')

    def train(out, *more):
        r = subprocess.run([sys.executable, 'train.py', *args, f'--out_dir={out}', *more], cwd=root,
                           capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS='1'))
        assert r.returncode == 0, r.stderr[-2000:]
        with open(os.path.join(out, 'train_log.jsonl')) as f:
            return {rec['iter']: rec['loss'] for rec in map(json.loads, f)}

    whole = train(tmp_path / 'whole', '--max_iters=8')
    train(tmp_path / 'part', '--max_iters=4')
    ckpt = torch.load(tmp_path / 'part' / 'ckpt.pt', map_location='cpu', weights_only=True)
    assert set(ckpt['model']) == {'transformer.wte.weight', 'transformer.wpe.weight', 'lm_head.weight'}
    assert 'transformer.h.1.attn.c_k.weight' in ckpt['frozen']
    from checkpoint import load_checkpoint, model_from_checkpoint       # every weight back, for evaluating
    train(tmp_path / 'every', '--max_iters=4', '--checkpoint_frozen=True')
    path = str(tmp_path / 'part' / 'ckpt.pt')
    ckpt = load_checkpoint(path, keys=('model', 'model_args', 'config'), trained_only=True)
    with pytest.raises(ValueError, match="paper 2's 'sparse' construction"):     # no construction passed in
        model_from_checkpoint(ckpt, path)
    rebuilt = model_from_checkpoint(ckpt, path, construct=u.write_construction).state_dict()
    every = torch.load(tmp_path / 'every' / 'ckpt.pt', map_location='cpu', weights_only=True)['model']
    assert rebuilt.keys() == every.keys() and all(torch.equal(rebuilt[k], every[k]) for k in every)
    ckpt['frozen']['transformer.h.1.attn.c_k.weight'] = '0' * 64
    with pytest.raises(ValueError, match='transformer.h.1.attn.c_k.weight'):
        model_from_checkpoint(ckpt, path, construct=u.write_construction)
    resumed = train(tmp_path / 'part', '--max_iters=8', '--init_from=resume')
    assert sorted(resumed) == list(range(1, 9))
    for it in range(5, 9):
        assert resumed[it] == pytest.approx(whole[it], rel=1e-6, abs=1e-7), it


def test_write_construction_is_what_train_py_loads():
    """train.py --construction=sparse: the model's own shape gets the sparse R_Q, R_K, R_V; E and U keep their
    init; a width below M is refused."""
    from model import GPT
    torch.manual_seed(0)
    gpt = GPT(universal_config(H=2, L=2, d_in=4, d=3, m=60, block_size=8))
    wte = gpt.transformer.wte.weight.detach().clone()
    u.write_construction(gpt, 'sparse')
    R = u.sparse_weights(2, 2, 4, 3, 60)
    assert torch.equal(gpt.transformer.h[1].attn.c_k.weight, R['R_K'][1].transpose(1, 2).reshape(6, 60).float())
    assert torch.equal(gpt.transformer.wte.weight, wte)
    with pytest.raises(ValueError):
        u.write_construction(GPT(universal_config(H=2, L=2, d_in=4, d=3, m=40, block_size=8)), 'sparse')


ROOT = os.path.join(os.path.dirname(__file__), '..')


def test_tables_rebuild_from_committed_logs(tmp_path, monkeypatch):
    """results/paper2/<run>/log.jsonl are the runs behind docs/paper2.md: `table` (load_results + results_table)
    gives each cell the mean ± std of the last records' val_acc, beside the paper's numbers; every run's
    command.sh is the command that run_one would launch, so a finished run is reused, not rerun."""
    import shutil
    import statistics
    runs = paper2.experiment_runs('table1', 'cpu', (0, 1, 2), tasks=('khop1',), archs=('res_ln',))
    assert [r[0] for r in runs] == [f'khop1_res_ln_{m}_seed{s}' for m in ('sparse', 'random', 'full')
                                    for s in (0, 1, 2)]
    results = os.path.join(ROOT, 'results', 'paper2')
    found = paper2.load_results(runs, results)
    assert set(found) == {r[0] for r in runs}
    acc = {n: 100 * paper2.read_log(os.path.join(results, n, 'log.jsonl'))[-1]['val_acc'] for n in found}
    cells = []
    for m in ('sparse', 'random', 'full'):
        a = [acc[f'khop1_res_ln_{m}_seed{s}'] for s in (0, 1, 2)]
        cells.append(f"{statistics.mean(a):.1f} ± {statistics.stdev(a):.1f}")
    row = paper2.results_table('table1', found).splitlines()[2]
    assert row == '| khop1 | + residual and LN | ' + ' | '.join(cells) + ' | 100.0 | 96.1 | 100.0 |'
    name, config, model, arch, extra, _ = runs[1]
    shutil.copytree(os.path.join(results, name), tmp_path / name)
    last = paper2.run_one(config, model, arch, name, extra, out='out/universal/cpu', results=str(tmp_path))
    assert last == paper2.read_log(os.path.join(results, name, 'log.jsonl'))[-1] and 'cpu_s' in last
    assert last['iter'] == train_keys([config], max_iters=0)['max_iters']
    assert paper2.run_one(config, model, arch, name, extra, out=str(tmp_path / 'elsewhere'), results=str(tmp_path),
                     start=False) == last                               # made with another out dir: the same run
    monkeypatch.setenv('OMP_NUM_THREADS', '2')
    assert paper2.run_one(config, model, arch, name, extra, out='out/universal/cpu', results=str(tmp_path),
                     start=False) == last                               # made on another number of threads: too
    name, config, model, arch, extra, _ = runs[2]                       # no log: start=False starts nothing
    assert paper2.run_one(config, model, arch, name, extra, out=str(tmp_path / 'out'), results=str(tmp_path),
                     start=False) is None and not os.path.exists(tmp_path / 'out')
