"""bench.py and fast training: the FLOP counter (hardware.flops_per_token) against a hand count and against the
matmuls autograd actually runs (frozen weights get no weight-gradient matmul, MixiT no dA), the MixiT mixing
against the plain broadcast matmul, torch.compile against eager (MixiT by default, every variant with SLOW=1),
and bench.py end to end."""

import json
import os
import platform
import subprocess
import sys

import pytest
import torch
import torch._functorch.config
from torch.utils.flop_counter import FlopCounterMode

from hardware import flops_per_token, partitioner_settings
from model import GPT, GPTConfig, VARIANTS, mixit_matrices

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = dict(n_layer=2, n_embd=16, n_head=2, vocab_size=32, block_size=8)     # head_dim 8, MLP 64


def tiny(variant, **kw):
    torch.manual_seed(0)
    return GPT(GPTConfig.from_keys(**dict(TINY, variant=variant, **kw)))


# Hand count at T = 8, so (T+1)/2 = 4.5 positions per token on average. A trainable 16x16 linear: 3 * 2*16*16 =
# 1536, frozen: 1024; a trainable 16x64 MLP linear: 6144, frozen: 4096; head 16x32: 3072 (always trained).
# Softmax scores: 6 * 4.5 * 2 heads * (8 + 8) = 864. MixiT mixing: 4 * 4.5 * 2 heads * 8 = 288.
HAND = {
    'standard': 2 * (4 * 1536 + 864 + 3 * 6144) + 3072,                  # 53,952
    'frozen_qk': 2 * (2 * 1024 + 2 * 1536 + 864 + 3 * 6144) + 3072,      # q, k: no weight gradient
    'frozen_mlp': 2 * (4 * 1536 + 864 + 3 * 4096) + 3072,
    'mixit': 2 * (2 * 1536 + 288 + 3 * 6144) + 3072,                     # no q, k, no scores
    'random': 2 * (4 * 1024 + 864 + 3 * 4096) + 3072,                    # every block weight frozen
    # universal: no W_O, no MLP; each head's value is 16 wide (c_v 16 -> 32, frozen: 2*16*32*2 = 2048),
    # scores 6 * 4.5 * 2 * (8 + 16) = 1296
    'universal': 2 * (2 * 1024 + 2048 + 1296) + 3072,
}


@pytest.mark.parametrize('variant', VARIANTS)
def test_flops_per_token_hand_count(variant):
    if variant not in HAND:
        pytest.fail(f"variant {variant!r} is new: add its hand count of FLOPs per token at T = 8 to HAND in "
                    f"tests/test_bench.py (the comment above HAND shows how; docs/fork.md#add-a-variant)")
    assert flops_per_token(tiny(variant), 8) == HAND[variant]
    assert flops_per_token(tiny(variant), 8, scored=0.25) == HAND[variant] - 0.75 * 3072   # the head at 1 token in 4


@pytest.mark.parametrize('variant', VARIANTS)
def test_flops_match_the_matmuls_autograd_runs(variant):
    """Count the FLOPs of every matmul that forward + backward execute (eager, fp32). The linears (mm/addmm) must
    equal the counter's linear terms exactly, so a frozen weight really gets no weight-gradient matmul; MixiT's
    mixing runs dense (T x T, not causal): 2 matmuls (A v, A^T dy), none for dA."""
    B, T, model = 3, 8, tiny(variant)
    idx = torch.randint(32, (B, T))
    with FlopCounterMode(display=False) as counter:
        model(idx, idx)[1].backward()
    ops = {str(op): n for op, n in counter.get_flop_counts()['Global'].items()}
    linears = sum(n for op, n in ops.items() if op in ('aten.mm', 'aten.addmm'))
    a, L = model.transformer.h[0].attn, model.config.n_layer
    Tc = (T + 1) / 2
    core = 4 * Tc * a.n_head * a.v_dim if a.mixit else 6 * Tc * a.n_head * (a.head_dim + a.v_dim)
    assert linears == pytest.approx(B * T * (flops_per_token(model, T) - L * core))
    if a.mixit:
        assert ops.get('aten.bmm', 0) == L * 2 * (2 * a.n_head * T * T * B * a.v_dim)


def test_mixit_mixing_is_the_broadcast_matmul():
    """The head-batched matmul in Attention.forward equals A[:, :T, :T] @ v per sequence (paper 1, eq. 2.3)."""
    model = tiny('mixit')
    attn = model.transformer.h[1].attn
    x = torch.randn(3, 6, 16)
    w = attn.width_scale                        # the authors' block: c_v, c_proj outputs times sqrt(512 / n)
    v = w * attn.c_v(x).view(3, 6, 2, 8).transpose(1, 2)
    A = mixit_matrices(model.config, 1)[:, :6, :6]
    expected = w * attn.c_proj((A @ v).transpose(1, 2).reshape(3, 6, 16))
    torch.testing.assert_close(attn(x, None), expected)


def train_losses(variant, compiled, steps=3, recompute=None):
    """Losses of `steps` AdamW steps of a one-layer model on fixed random tokens, fp32 (so that compiled and eager
    can agree tightly); compiled under the partitioner settings `recompute` (hardware.partitioner_settings's
    keywords; torch's defaults when None)."""
    model = tiny(variant, n_layer=1)
    opt = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), 'cpu')
    run = torch.compile(model) if compiled else model
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(32, (steps, 4, 9), generator=g)
    losses = []
    for s in range(steps):
        with torch._functorch.config.patch(**partitioner_settings(**(recompute or {}))):
            _, loss = run(idx[s, :, :-1], idx[s, :, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return losses


# torch.compile (inductor, C++ codegen with gcc) of a tiny model's forward + backward costs ~10-20 s of CPU per
# variant, so by default only MixiT (the variant whose attention is written for the compiler: a permute and one
# head-batched matmul against a buffer) is compiled; SLOW=1 compiles the training step of every variant.
COMPILED = VARIANTS if os.environ.get('SLOW') else ('mixit',)


@pytest.mark.parametrize('variant', COMPILED)
def test_compiled_training_matches_eager(variant):
    torch._dynamo.reset()
    eager, compiled = train_losses(variant, False), train_losses(variant, True)
    assert compiled == pytest.approx(eager, rel=1e-4, abs=1e-5)


RECOMPUTE = {'pointwise': dict(recompute_pointwise=True),       # train.py's default
             'budget_0.5': dict(activation_memory_budget=0.5, recompute_pointwise=True),
             'budget_0': dict(activation_memory_budget=0.0)}         # recompute all but the graph's inputs


@pytest.mark.parametrize('recompute', RECOMPUTE.values(), ids=RECOMPUTE.keys())
def test_compiled_training_with_recomputation_matches_eager(recompute):
    """What the compiler recomputes in the backward instead of keeping equals what it would have kept."""
    torch._dynamo.reset()
    eager, compiled = train_losses('standard', False), train_losses('standard', True, recompute=recompute)
    assert compiled == pytest.approx(eager, rel=1e-4, abs=1e-5)


def matmul_calls(model, idx, recompute):
    """aten::mm and aten::addmm calls in one forward + backward of `model` on idx (B, T + 1), after one untimed
    pass (a compiled model compiles in it) under the partitioner settings `recompute`."""
    def step():
        with torch._functorch.config.patch(**partitioner_settings(**recompute)):
            _, loss = model(idx[:, :-1], idx[:, 1:])
        loss.backward()
    step()
    with torch.profiler.profile() as prof:
        step()
    return sum(e.count for e in prof.key_averages() if e.key in ('aten::mm', 'aten::addmm'))


@pytest.mark.parametrize('recompute, recomputes_matmuls', [(RECOMPUTE['pointwise'], False),
                                                          (RECOMPUTE['budget_0'], True)], ids=['pointwise', 'budget_0'])
def test_recompute_pointwise_recomputes_no_matmul(recompute, recomputes_matmuls):
    """Under recompute_pointwise the compiled backward makes as many matmuls as the eager one: it recomputes
    pointwise ops only. A memory budget of 0 recomputes the forward's matmuls too (the count can differ)."""
    torch._dynamo.reset()
    model = tiny('standard', n_layer=2)
    idx = torch.randint(32, (4, 9), generator=torch.Generator().manual_seed(1))
    eager = matmul_calls(model, idx, {})
    compiled = matmul_calls(torch.compile(model), idx, recompute)
    assert (compiled > eager) == recomputes_matmuls, (eager, compiled)


def test_bench_end_to_end(tmp_path):
    """bench.py on a tiny shape with two variants: the table, the JSON, and speedups measured vs FLOP-predicted."""
    out = tmp_path / 'b.json'
    args = ['--n_layer=2', '--n_embd=32', '--n_head=2', '--vocab_size=64', '--block_size=16', '--batch_size=2',
            '--variants=standard,mixit', '--compile=False', '--dtype=float32', '--warmup=1', '--iters=10',
            '--cpu_peak_n=256', f'--json_out={out}']
    r = subprocess.run([sys.executable, 'bench.py', *args], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert 'FLOP-pred' in lines[-5] and 'peak mem: one model' in lines[-2] and 'load average' in lines[-1]
    res = {x['variant']: x for x in json.load(open(out))['results']}
    assert set(res) == {'standard', 'mixit'} and all(len(x['times']) == 10 for x in res.values())
    m = tiny('mixit', n_embd=32, vocab_size=64, block_size=16)
    assert res['mixit']['flops_per_token'] == flops_per_token(m, 16)
    predicted = res['standard']['flops_per_token'] / flops_per_token(m, 16)
    assert res['mixit']['predicted_speedup'] == pytest.approx(predicted)
    assert res['standard']['speedup'] == 1.0 and res['standard']['mfu'] > 0 and res['mixit']['cpu_share'] > 0
    for x in res.values():      # fp32 weights, AdamW's two moments and a step count per tensor, then the step
        n_tensors = len(list(tiny(x['variant'], n_embd=32, vocab_size=64, block_size=16).parameters()))
        assert x['state_bytes'] >= 4 * x['params'] + 8 * x['trainable_params'] + 4 * n_tensors
        if platform.system() == 'Linux':
            assert x['peak_memory'] >= x['state_bytes']
    bad = subprocess.run([sys.executable, 'bench.py', '--variants=standard,nope'], cwd=ROOT, capture_output=True,
                         text=True)
    assert bad.returncode == 2 and bad.stderr.strip().startswith('error: unknown variant')
    assert json.load(open(out))['setup']['data_ms'] is None                 # no train.py config, no task


def test_bench_shape(tmp_path):
    """--shape: on a CPU without a config file 'auto' is 'small' (SMALL under the keys a flag sets, with a note
    naming --shape=lm), 'lm' leaves the keys' defaults (T 1024); the shape is in the first line and the JSON; a bad
    value is one line."""
    args = ['--n_embd=16', '--n_head=2', '--vocab_size=32', '--batch_size=1', '--compile=False', '--dtype=float32',
            '--warmup=0', '--iters=10', '--cpu_peak_n=64']
    env = dict(os.environ, OMP_NUM_THREADS='1')
    for flags, shape, n_layer, T in ((['--device=cpu'], 'small', 4, 256),
                                     (['--shape=lm', '--n_layer=1'], 'lm', 1, 1024)):
        out = tmp_path / f'{shape}.json'
        r = subprocess.run([sys.executable, 'bench.py', *args, *flags, f'--json_out={out}'], cwd=ROOT,
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        setup = json.load(open(out))['setup']
        assert (setup['shape'], setup['n_layer'], setup['n_embd'], setup['T']) == (shape, n_layer, 16, T)
        assert f'| shape {shape}: {n_layer} layers, n_embd 16, 2 heads, vocab 32, T {T} |' in r.stdout
        assert ('--shape=lm times paper 1' in r.stderr) == (shape == 'small')
    bad = subprocess.run([sys.executable, 'bench.py', '--shape=big'], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr == "error: --shape must be 'auto', 'lm' or 'small', got 'big'\n"


def test_bench_compile_mode_and_optimizer_impl_reach_the_step(tmp_path):
    """--compile_mode and --optimizer_impl reach the step: compiled in mode reduce-overhead (on a CPU without its
    CUDA graphs) and stepped by the foreach AdamW, it makes the eager fused step's losses; the first line and the
    JSON name both, each result the optimizer that stepped it; a bad value of either is a one-line error."""
    args = ['--n_layer=1', '--n_embd=16', '--n_head=2', '--vocab_size=32', '--block_size=8', '--batch_size=2',
            '--dtype=float32', '--warmup=1', '--iters=10', '--cpu_peak_n=64']
    env = dict(os.environ, OMP_NUM_THREADS='1')
    got = {}
    for name, flags in (('eager', ['--compile=False']),
                        ('moded', ['--compile_mode=reduce-overhead', '--optimizer_impl=foreach'])):
        out = tmp_path / f'{name}.json'
        r = subprocess.run([sys.executable, 'bench.py', *args, *flags, f'--json_out={out}'], cwd=ROOT,
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        got[name] = r.stdout.splitlines()[0], json.load(open(out))
    (line, eager), (moded_line, moded) = got['eager'], got['moded']
    assert '| compile False | AdamW fused |' in line and eager['setup']['compile_mode'] is None
    assert eager['results'][0]['optimizer'] == 'fused' and eager['results'][0]['compile_mode'] is None
    assert 'compile True, mode reduce-overhead (' in moded_line and '| AdamW foreach |' in moded_line
    assert (moded['setup']['compile_mode'], moded['setup']['optimizer_impl']) == ('reduce-overhead', 'foreach')
    (r,) = moded['results']
    assert (r['compile_mode'], r['optimizer']) == ('reduce-overhead', 'foreach')
    assert len(r['losses']) == 10 and r['losses'] == pytest.approx(eager['results'][0]['losses'], rel=1e-5)
    for flag, message in (('--compile_mode=fast', "error: --compile_mode must be one of '', 'max-autotune', "),
                          ('--optimizer_impl=sgd', "error: --optimizer_impl must be 'fused' or 'foreach', got 'sgd'")):
        bad = subprocess.run([sys.executable, 'bench.py', flag], cwd=ROOT, capture_output=True, text=True, env=env)
        assert bad.returncode == 2 and bad.stderr.startswith(message) and bad.stderr.count('\n') == 1, bad.stderr


def test_bench_times_a_configs_data_draw(tmp_path):
    """With a train.py config (one of whose task keys a flag overrides), the host's time to draw a global batch
    of its task, in the JSON and the first line; none with data_iters=0."""
    out = tmp_path / 'b.json'
    args = ['config/dyck1_standard.py', '--dyck1_batched=False', '--n_layer=1', '--n_embd=16', '--n_head=2',
            '--batch_size=64', '--micro_batch_size=64', '--compile=False', '--dtype=float32', '--warmup=1',
            '--iters=10', '--cpu_peak_n=256', f'--json_out={out}']
    for data_iters in (3, 0):
        r = subprocess.run([sys.executable, 'bench.py', *args, f'--data_iters={data_iters}'], cwd=ROOT,
                           capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS='1'))
        assert r.returncode == 0, r.stderr[-2000:]
        setup = json.load(open(out))['setup']
        data_ms = setup['data_ms']
        assert setup['shape'] == 'lm'           # a config file's model is train.py's: GPTConfig's defaults beneath
        if data_iters:
            assert data_ms > 0 and f"data {data_ms:.1f} ms per batch on the host" in r.stdout.splitlines()[0]
        else:
            assert data_ms is None and 'per batch on the host' not in r.stdout


def test_bench_profile(tmp_path):
    """--profile: one extra step per model under torch.profiler, its op table printed, a Chrome trace written."""
    prefix = tmp_path / 'traces' / 'step'
    args = ['--n_layer=1', '--n_embd=16', '--n_head=2', '--vocab_size=32', '--block_size=8', '--batch_size=2',
            '--compile=False', '--dtype=float32', '--warmup=1', '--iters=10', '--cpu_peak_n=64', f'--profile={prefix}']
    r = subprocess.run([sys.executable, 'bench.py', *args], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'costliest ops' in r.stdout and 'aten::mm' in r.stdout
    trace = json.load(open(f'{prefix}_standard.json'))
    assert any(e.get('name') == 'aten::mm' for e in trace['traceEvents'])


def test_bench_against_hugging_face_llama(tmp_path):
    """--against=hf times Hugging Face's LlamaForCausalLM of the standard shape beside ours: the same parameter
    count and FLOPs, a loss that trains like ours, the ratio printed; without transformers, a one-line error."""
    args = ['--n_layer=2', '--n_embd=32', '--n_head=2', '--vocab_size=64', '--block_size=16', '--batch_size=2',
            '--against=hf', '--compile=False', '--dtype=float32', '--warmup=1', '--iters=10', '--cpu_peak_n=256']
    env = dict(os.environ, OMP_NUM_THREADS='1')
    fake = tmp_path / 'no_hf' / 'transformers'
    fake.mkdir(parents=True)
    (fake / '__init__.py').write_text("raise ImportError('transformers is not installed')\n")
    r = subprocess.run([sys.executable, 'bench.py', *args], cwd=ROOT, capture_output=True, text=True,
                       env=dict(env, PYTHONPATH=str(fake.parent)))
    assert r.returncode == 2 and r.stderr.strip() == 'error: --against=hf needs Hugging Face transformers: ' \
                                                      'pip install transformers'
    pytest.importorskip('transformers')
    out = tmp_path / 'b.json'
    r = subprocess.run([sys.executable, 'bench.py', *args, f'--json_out={out}'], cwd=ROOT, capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    res = {x['variant']: x for x in json.load(open(out))['results']}
    ours, hf = res['standard'], res['hf_llama']
    assert hf['params'] == ours['params'] == hf['trainable_params']
    assert hf['flops_per_token'] == ours['flops_per_token']
    assert abs(hf['loss'] - ours['loss']) < 0.5                 # both near ln 64 = 4.16 on random tokens
    assert 'standard / hf_llama: ' in r.stdout


