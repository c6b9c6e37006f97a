"""bench.py and fast training: the FLOP counter (hardware.flops_per_token) against a hand count and against the
matmuls autograd actually runs (frozen weights get no weight-gradient matmul, MixiT no dA), the MixiT mixing
against the plain broadcast matmul, torch.compile against eager (MixiT by default, every variant with SLOW=1),
and bench.py end to end."""

import json
import os
import platform
import subprocess
import sys
import time

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
    return GPT(GPTConfig(**dict(TINY, variant=variant, **kw)))


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


def fake_matmul_rates(monkeypatch, rates, measured=None):
    """Make hardware's CPU matmuls run at rates[dtype] FLOP/s at every size; measured collects (dtype, n) timed."""
    import hardware

    def flops(dtype, n, reps=5):
        if measured is not None and reps == 5:            # a timing, not cpu_matmul_size's probe
            measured.append((dtype, n))
        return rates[dtype]
    monkeypatch.setattr(hardware, 'cpu_matmul_flops', flops)


def test_cpu_matmul_size_keeps_each_matmul_short(monkeypatch):
    """The full size where a dtype is fast; halved until one matmul takes max_s or less where it is slow (bf16
    without bf16 units: about 1 GFLOP/s), but never below the probe's size."""
    import hardware
    fake_matmul_rates(monkeypatch, {torch.bfloat16: 1e9, torch.float32: 1e11})
    assert hardware.cpu_matmul_size(torch.float32, 4096) == 4096               # 1.4 s a matmul
    assert hardware.cpu_matmul_size(torch.float32, 4096, max_s=1) == 2048
    assert hardware.cpu_matmul_size(torch.bfloat16, 4096) == 1024              # 2.1 s; 2048^3 would take 17 s
    assert hardware.cpu_matmul_size(torch.bfloat16, 4096, max_s=2) == 512
    assert hardware.cpu_matmul_size(torch.bfloat16, 4096, max_s=0.05) == 256   # the probe's size at least
    assert hardware.cpu_matmul_size(torch.bfloat16, 3000) == 750
    assert hardware.cpu_matmul_size(torch.bfloat16, 64) == 64


def test_auto_cpu_dtype_picks_the_faster_matmul(monkeypatch):
    import hardware
    for bf16, fp32, expected in [(8e11, 2e11, 'bfloat16'), (1.9e11, 3.6e11, 'float32'), (1e9, 1e11, 'float32')]:
        measured = []
        fake_matmul_rates(monkeypatch, {torch.bfloat16: bf16, torch.float32: fp32}, measured)
        assert hardware.auto_cpu_dtype() == (expected, bf16, fp32)
        size = 1024 if bf16 > 1e10 else 256                  # both dtypes timed at one size: the slower's
        assert measured == [(torch.bfloat16, size), (torch.float32, size)]
    monkeypatch.undo()
    name, bf16, fp32 = hardware.auto_cpu_dtype(n=256)   # measured here: a valid choice that matches its numbers
    assert bf16 > 0 and fp32 > 0 and name == ('bfloat16' if bf16 > fp32 else 'float32')


def test_cpu_peak_is_measured_once_per_machine_and_dtype(monkeypatch, tmp_path):
    """train.py's MFU peak: measured the first time, then read from the cache, so two runs' MFU use one peak;
    another dtype is another measurement, at a smaller size where it is slow; an unreadable cache entry or an
    unwritable cache is measured again, and the source says so."""
    import hardware
    measured = []
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    monkeypatch.setattr(hardware, 'load_per_core', lambda: 0.1)
    fake_matmul_rates(monkeypatch, {torch.float32: 1e11, torch.bfloat16: 1e9}, measured)
    first, second = hardware.cpu_peak_flops('float32'), hardware.cpu_peak_flops('float32')
    assert first[0] == second[0] == 1e11 and measured == [(torch.float32, 2048)]
    assert first[1].startswith('2048^3 float32') and 'measured now and cached' in first[1]
    assert second[1].startswith('2048^3 float32') and 'measured now' not in second[1]
    bf16 = hardware.cpu_peak_flops('bfloat16')
    assert bf16[0] == 1e9 and measured[-1] == (torch.bfloat16, 1024) and bf16[1].startswith('1024^3 bfloat16')
    assert hardware.cpu_peak_flops('bfloat16')[1].startswith('1024^3 bfloat16') and len(measured) == 2  # cached
    assert hardware.peak_flops('cpu', 'cpu', 'float32')[0] == 1e11 and len(measured) == 2
    (tmp_path / 'learned-transformer' / 'cpu_peak.json').write_text('not json')   # a broken cache: measured again
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 3
    key = next(iter(json.loads((tmp_path / 'learned-transformer' / 'cpu_peak.json').read_text())))
    (tmp_path / 'learned-transformer' / 'cpu_peak.json').write_text(json.dumps({key: 1e11}))   # an entry without n
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 4
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'file'))
    (tmp_path / 'file').write_text('')                                          # the cache's folder cannot exist
    flops, source = hardware.cpu_peak_flops('float32')
    assert flops == 1e11 and 'not cached' in source and len(measured) == 5


def test_a_cached_cpu_peak_that_cannot_be_the_peak_is_measured_again(monkeypatch, tmp_path):
    """A planted low peak is replaced once a step achieves more (train.py passes the achieved rate as floor), and
    so is one measured under load once the load is gone, or one measured long ago; each entry keeps its time and
    load, and a peak measured under load says so in its source."""
    import time as time_
    import hardware
    measured = []
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    monkeypatch.setattr(hardware, 'load_per_core', lambda: 0.1)
    fake_matmul_rates(monkeypatch, {torch.float32: 1e11}, measured)
    hardware.cpu_peak_flops('float32')
    path = tmp_path / 'learned-transformer' / 'cpu_peak.json'
    key, entry = next(iter(json.loads(path.read_text()).items()))
    assert entry['load'] == 0.1 and abs(entry['time'] - time_.time()) < 60
    plant = lambda **kw: path.write_text(json.dumps({key: dict(entry, **kw)}))
    plant(flops=2e10)                                               # a peak measured while the cores were busy
    assert hardware.cpu_peak_flops('float32')[0] == 2e10 and len(measured) == 1      # believed, until...
    assert hardware.cpu_peak_flops('float32', floor=3e10)[0] == 1e11 and len(measured) == 2   # a step beats it
    plant(flops=2e10, load=1.5)                                     # measured under load, and the load is gone
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 3
    plant(flops=2e10, time=time_.time() - 2 * hardware.PEAK_MAX_AGE_S)
    assert hardware.cpu_peak_flops('float32')[0] == 1e11 and len(measured) == 4
    monkeypatch.setattr(hardware, 'load_per_core', lambda: 1.5)
    plant(flops=2e10, load=1.5)                                     # still loaded: measuring again would not help
    assert hardware.cpu_peak_flops('float32')[0] == 2e10 and len(measured) == 4
    plant(flops=2e10, time=0)
    flops, source = hardware.cpu_peak_flops('float32')
    assert flops == 1e11 and 'load 1.50 per core' in source and len(measured) == 5


FAULTS = """
import resource, sys, torch
from hardware import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == 'keep' else False
faults = []
for _ in range(8):                                  # a 64 MiB block allocated and freed, as a training step does
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.ones(64, 2**20, dtype=torch.uint8)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(applied, min(faults[1:]))                     # the fewest page faults of a reallocation
"""


@pytest.mark.skipif(platform.libc_ver()[0] != 'glibc', reason='mallopt is glibc-only')
def test_keep_freed_memory_reuses_pages():
    """glibc's default maps a fresh 64 MiB block every time (16,384 page faults of 4 KiB); kept memory is reused
    after a few cycles (no faults)."""
    def run(mode):
        r = subprocess.run([sys.executable, '-c', FAULTS, mode], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        applied, faults = r.stdout.split()
        return applied == 'True', int(faults)
    (applied_default, default), (applied_keep, kept) = run('default'), run('keep')
    assert not applied_default and applied_keep
    assert default > 10_000 and kept < 1_000, (default, kept)



@pytest.mark.skipif(not os.path.exists('/proc/self/statm'), reason='needs /proc')
def test_resident_peak_sees_a_freed_block():
    """A 256 MiB tensor written and freed inside the block: its pages are in the sampled peak, not in the resident
    set after it (glibc maps a block this large afresh and unmaps it on free)."""
    from hardware import ResidentPeak, release_free_memory, resident_bytes
    release_free_memory()
    with ResidentPeak(interval=0.001) as rss:
        block = torch.ones(256, 2**20, dtype=torch.uint8)
        time.sleep(0.05)                                # several samples while it lives
        del block
    assert rss.peak - rss.start >= 250 * 2**20
    assert resident_bytes() - rss.start < 100 * 2**20


KEPT = """
import torch
from hardware import keep_freed_memory, release_free_memory, resident_bytes
assert keep_freed_memory()
torch.ones(256, 2**20, dtype=torch.uint8)            # 256 MiB written and freed: kept in the heap
kept = resident_bytes()
release_free_memory()
print(kept - resident_bytes())
"""


@pytest.mark.skipif(platform.libc_ver()[0] != 'glibc', reason='mallopt is glibc-only')
def test_release_free_memory_after_keep_freed_memory():
    """Kept memory stays resident after a free; release_free_memory hands it back (bench.step_memory relies on
    this to measure a step under kept memory)."""
    r = subprocess.run([sys.executable, '-c', KEPT], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout) >= 200 * 2**20

