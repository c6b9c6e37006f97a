"""train.py end to end on CPU (and a tiny model learning a tiny task): resuming reproduces an uninterrupted run's
losses, and two gloo processes under torchrun log the same losses as one process with the same global batch."""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import tasks
from model import GPT, GPTConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ['--task=retrieval', '--retrieval_vocab_size=32', '--retrieval_m_max=4', '--n_test=200', '--n_layer=2',
        '--n_head=2', '--n_embd=32', '--batch_size=16', '--eval_interval=4', '--log_interval=1', '--eval_iters=2',
        '--compile=False', '--dtype=float32', '--device=cpu', '--warmup_iters=2', '--learning_rate=3e-3',
        '--lr_decay_iters=12']


def run(args, launcher=(sys.executable,), check=True):
    env = dict(os.environ, OMP_NUM_THREADS='1')
    r = subprocess.run([*launcher, 'train.py', *args], cwd=ROOT, capture_output=True, text=True, env=env)
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r


def losses(out_dir):
    with open(os.path.join(out_dir, 'train_log.jsonl')) as f:
        return {r['iter']: r['loss'] for r in map(json.loads, f)}


@pytest.mark.parametrize('prefetch, order', [(0, []), (2, []),
                                             (2, ['--fixed_train=True', '--n_train=40', '--train_order=epochs'])])
def test_resume_continues_exactly(prefetch, order, tmp_path):
    """Stopped at step 8 and resumed, a run logs the uninterrupted run's losses; drawn by a prefetching worker
    (before and after the stop), the batches are the loop's own; going through shuffled epochs of a fixed
    training set, the resumed run goes on from the example it reached (the stop falls inside the fourth epoch)."""
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    run(TINY + order + ['--max_iters=12', f'--out_dir={full}'])
    run(TINY + order + ['--max_iters=8', f'--out_dir={part}', f'--prefetch={prefetch}'])
    ckpt = torch.load(os.path.join(part, 'ckpt.pt'), map_location='cpu', weights_only=False)
    assert ckpt['iter_num'] == 8 and not any(k.startswith('_orig_mod') for k in ckpt['model'])
    assert ckpt['data_start'] == 8 * 16
    run(TINY + order + ['--max_iters=12', f'--out_dir={part}', '--init_from=resume', f'--prefetch={prefetch}'])
    a, b = losses(full), losses(part)
    assert sorted(b) == list(range(1, 13))
    for it in range(9, 13):
        assert b[it] == pytest.approx(a[it], rel=1e-6, abs=1e-7), it
    for out in (full, part):                         # the resumed run logs each evaluation once
        with open(os.path.join(out, 'log.jsonl')) as f:
            records = [json.loads(line) for line in f]
        assert [r['iter'] for r in records] == [0, 4, 8, 12]
        assert all({'iter', 'train_loss', 'val_loss', 'val_acc'} <= set(r) for r in records)


def test_resume_from_the_trained_weights_alone(tmp_path):
    """With checkpoint_frozen=False a random transformer's ckpt.pt holds only its trained weights and a hash of
    each frozen one; resumed, the run rebuilds the frozen weights from its seed and logs the uninterrupted run's
    losses. Frozen weights that no longer match their hashes, or a script that needs every weight, are one-line
    errors (exit 2)."""
    random = TINY + ['--variant=random', '--checkpoint_frozen=False']
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    run(random + ['--max_iters=12', f'--out_dir={full}'])
    run(random + ['--max_iters=8', f'--out_dir={part}'])
    ckpt_path = os.path.join(part, 'ckpt.pt')
    ckpt = torch.load(ckpt_path, map_location='cpu', weights_only=True)
    model = GPT(GPTConfig.from_keys(**ckpt['model_args']))
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert set(ckpt['frozen']) == frozen and set(ckpt['model']) == set(model.state_dict()) - frozen
    assert 'transformer.h.0.attn.c_q.weight' in ckpt['frozen'] and 'transformer.wte.weight' in ckpt['model']
    shutil.copy(ckpt_path, tmp_path / 'ckpt.pt')
    run(random + ['--max_iters=12', f'--out_dir={part}', '--init_from=resume'])
    a, b = losses(full), losses(part)
    assert sorted(b) == list(range(1, 13))
    for it in range(9, 13):
        assert b[it] == pytest.approx(a[it], rel=1e-6, abs=1e-7), it

    tampered = str(tmp_path / 'tampered')
    run(random + ['--max_iters=8', f'--out_dir={tampered}'])
    ckpt['frozen']['transformer.h.1.mlp.c_up.weight'] = '0' * 64
    torch.save(ckpt, os.path.join(tampered, 'ckpt.pt'))
    r = run(random + ['--max_iters=12', f'--out_dir={tampered}', '--init_from=resume'], check=False)
    assert r.returncode == 2 and 'Traceback' not in r.stderr and 'transformer.h.1.mlp.c_up.weight' in r.stderr
    r = run(TINY + ['--variant=random', '--max_iters=1', f'--out_dir={tmp_path / "init"}',
                    f'--init_from={tmp_path / "ckpt.pt"}'], check=False)
    assert r.returncode == 2 and 'holds only the trained weights' in r.stderr and 'Traceback' not in r.stderr
    r = subprocess.run([sys.executable, 'sample.py', f'--out_dir={part}', '--max_new_tokens=2'], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and 'use the ckpt_best.pt beside it' in r.stderr and 'Traceback' not in r.stderr


def test_two_process_gloo_equals_one_process(tmp_path):
    """The same global batch of 16, split differently: one process accumulating 4 micro-batches of 4, two
    processes with one micro-batch of 8 each (each drawing its batches in a prefetching worker)."""
    one, two = str(tmp_path / 'one'), str(tmp_path / 'two')
    run(TINY + ['--max_iters=6', '--micro_batch_size=4', '--eval_batch_size=8', f'--out_dir={one}'])
    run(TINY + ['--max_iters=6', '--eval_batch_size=8', '--prefetch=2', f'--out_dir={two}'],
        launcher=(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=2'))
    a, b = losses(one), losses(two)
    assert sorted(a) == sorted(b) == list(range(1, 7))
    for it in a:
        assert b[it] == pytest.approx(a[it], rel=1e-5), it
    with open(os.path.join(one, 'log.jsonl')) as f1, open(os.path.join(two, 'log.jsonl')) as f2:
        for r1, r2 in zip(map(json.loads, f1), map(json.loads, f2)):
            assert r2['val_loss'] == pytest.approx(r1['val_loss'], rel=1e-5)
            assert r2['train_loss'] == pytest.approx(r1['train_loss'], rel=1e-5)
            assert r2['val_acc'] == r1['val_acc']


def test_command_line_errors_are_one_line(tmp_path):
    for args, message in [(['--variant=mixiT'], 'unknown variant'), (['--task=nope'], 'unknown task'),
                          (['--init_from=resume', f'--out_dir={tmp_path}'], 'no checkpoint'),
                          (['--batch_size=16', '--micro_batch_size=5'], 'divisible'),
                          (['--prefetch=-1'], '--prefetch must be >= 0'),
                          (['--train_order=shuffled'], "--train_order must be 'replacement' or 'epochs'"),
                          (['--train_order=epochs'], '--train_order=epochs needs a fixed training set')]:
        r = run(TINY + args, check=False)
        assert r.returncode == 2 and 'Traceback' not in r.stderr and message in r.stderr, r.stderr


@pytest.mark.parametrize('schedule', ['cosine', 'linear'])
def test_learning_rate_schedule(schedule, tmp_path):
    """Warm-up to learning_rate over warmup_iters, then a cosine or linear decay to learning_rate * min_lr_ratio
    at lr_decay_iters (the record of iteration it + 1 holds the rate that step it used)."""
    run(TINY + ['--max_iters=12', f'--lr_schedule={schedule}', '--min_lr_ratio=0', f'--out_dir={tmp_path}'])
    with open(os.path.join(tmp_path, 'train_log.jsonl')) as f:
        lr = {r['iter'] - 1: r['lr'] for r in map(json.loads, f)}
    peak, warmup, decay = 3e-3, 2, 12
    for it, value in lr.items():
        if it < warmup:
            expected = peak * (it + 1) / (warmup + 1)
        else:
            p = (it - warmup) / (decay - warmup)
            expected = peak * ((1 - p) if schedule == 'linear' else 0.5 * (1 + np.cos(np.pi * p)))
        assert value == pytest.approx(expected, rel=1e-9, abs=1e-15), it
    assert len(lr) == 12


def test_log_line_has_mfu_from_tokens_per_second(tmp_path):
    """Every training record's MFU is tokens/s times the model's FLOPs per token over the peak named in the
    header, so MFU / tok_s is one constant; the peak is measured once per machine, and a second run uses it."""
    r = run(TINY + ['--max_iters=4', f'--out_dir={tmp_path}'])
    peak = (r'MFU against ([\d.e+-]+) TFLOP/s \(2048\^3 float32 matmul on \d+ thread\(s\)(?:, load [\d.]+ per core)?, '
            r'{}cached in ')
    first = re.search(peak.format('(measured now and )?'), r.stdout)
    assert first, r.stdout
    second = re.search(peak.format(''), run(TINY + ['--max_iters=1', f'--out_dir={tmp_path / "again"}']).stdout)
    assert second and second[1] == first[1]
    with open(os.path.join(tmp_path, 'train_log.jsonl')) as f:
        records = [json.loads(line) for line in f]
    ratios = [rec['mfu'] / rec['tok_s'] for rec in records]
    assert len(records) == 4 and min(ratios) > 0 and max(ratios) - min(ratios) < 1e-9 * max(ratios)


def test_a_cached_cpu_peak_below_the_achieved_rate_is_doubted(tmp_path):
    """A peak cached while other jobs held the cores (here 1 FLOP/s) gives MFU above 100%: the run says so once,
    measures the peak again and keeps the new one in the cache."""
    import time
    import hardware
    cache = tmp_path / 'cache'
    os.makedirs(cache / 'learned-transformer')
    key = f'{hardware.cpu_model()} | torch {torch.__version__} | float32 | 1 thread(s) | 2048^3'
    path = cache / 'learned-transformer' / 'cpu_peak.json'
    path.write_text(json.dumps({key: {'flops': 1.0, 'n': 2048, 'time': time.time(), 'load': 0.0}}))
    r = subprocess.run([sys.executable, 'train.py', *TINY, '--max_iters=3', f'--out_dir={tmp_path / "run"}'],
                       cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS='1', XDG_CACHE_HOME=str(cache)))
    assert r.returncode == 0, r.stderr[-2000:]
    notes = [line for line in r.stdout.splitlines() if line.startswith('note: MFU above 100%')]
    assert len(notes) == 1 and 'measured again' in notes[0] and str(path) in notes[0], r.stdout
    assert json.loads(path.read_text())[key]['flops'] > 1e6


def test_auto_dtype_on_a_cpu_is_its_faster_matmul(tmp_path):
    """dtype=auto on a CPU trains in bf16 only where a bf16 matmul beats an fp32 one, and says so; under torchrun
    rank 0 broadcasts its choice."""
    r = run(TINY + ['--dtype=auto', '--max_iters=2', f'--out_dir={tmp_path}'])
    found = re.search(r'on cpu, (\w+) \(auto: matmul bf16 ([\d.]+) vs fp32 ([\d.]+) GFLOP/s\)', r.stdout)
    assert found, r.stdout[-2000:]
    dtype, bf16, fp32 = found[1], float(found[2]), float(found[3])
    assert dtype in ('bfloat16', 'float32') and bf16 > 0 and fp32 > 0
    if bf16 != fp32:                                 # printed to 1 decimal: equal ones do not tell
        assert dtype == ('bfloat16' if bf16 > fp32 else 'float32')
    two = str(tmp_path / 'two')                      # under torchrun every rank takes rank 0's choice
    r = run(TINY + ['--dtype=auto', '--max_iters=2', f'--out_dir={two}'],
            launcher=(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=2'))
    assert '(auto: matmul bf16' in r.stdout and sorted(losses(two)) == [1, 2]


def test_tiny_model_learns_dyck1(one_thread):
    """A 2-layer model learns to tell balanced parenthesis strings of length <= 12 from near misses."""
    torch.manual_seed(0)
    task = tasks.make_task('dyck1', min_len=2, max_len=12, n_test=500, format='last')
    model = GPT(GPTConfig(vocab_size=4, block_size=task.block_size, n_layer=2, n_head=2, n_embd=48))
    opt = model.configure_optimizers(0.0, 3e-3, (0.9, 0.98), 'cpu')
    rng = np.random.default_rng(0)
    for _ in range(300):
        x, y = map(torch.from_numpy, task.get_batch(64, rng))
        model(x, y)[1].backward()
        opt.step()
        opt.zero_grad()
    x, y = task.test
    with torch.no_grad():
        pred = model(torch.from_numpy(x), torch.from_numpy(y))[0].argmax(-1).numpy()
    correct, total = task.score(pred, y)['acc']
    assert correct / total > 0.95


def test_help_lists_every_key_with_its_comment():
    """python train.py --help: the script's own keys and every GPTConfig field, each with its default."""
    r = subprocess.run([sys.executable, 'train.py', '--help'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith('usage: python train.py')
    lines = r.stdout.splitlines()
    for key, comment in (('max_iters', ''), ('variant', 'a row of VARIANTS'), ('rope', '[bool | None]'),
                         ('construction', 'paper 2'), ('block_size', "sequence length; 0: the task's")):
        assert any(line.strip().startswith(f'--{key}=') and comment in line for line in lines), key
    r = subprocess.run([sys.executable, 'train.py', '--rope=maybe'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: --rope: rope expects bool or None, got 'maybe' (str)"]


def test_float64_trains_in_double(tmp_path):
    """--dtype=float64: weights, optimizer state and the logged loss in double precision; the loss is that of
    float32 to float32's rounding at the first step (the same model and batch)."""
    r64, r32 = str(tmp_path / 'f64'), str(tmp_path / 'f32')
    run(TINY + ['--max_iters=3', '--dtype=float64', f'--out_dir={r64}'])
    run(TINY + ['--max_iters=3', f'--out_dir={r32}'])
    ckpt = torch.load(os.path.join(r64, 'ckpt.pt'), map_location='cpu', weights_only=True)
    assert all(v.dtype == torch.float64 for v in ckpt['model'].values() if v.is_floating_point())
    assert all(s['exp_avg'].dtype == torch.float64 for s in ckpt['optimizer']['state'].values())
    assert losses(r64)[1] == pytest.approx(losses(r32)[1], rel=1e-6) and losses(r64)[1] != losses(r32)[1]


def test_memorization_logs_its_capacity(tmp_path):
    """The memorization task scores bits per trainable parameter itself (Task.score, paper 1 Table 4): train.py's
    log has val_bits_per_param = log2(n) n^2 val_acc / the trainable parameters it prints."""
    out = str(tmp_path / 'mem')
    r = run(['--task=memorization', '--memorization_n_keys=8', '--n_layer=1', '--n_head=2', '--n_embd=16',
             '--batch_size=64', '--max_iters=10', '--eval_interval=10', '--compile=False', '--device=cpu',
             '--dtype=float32', f'--out_dir={out}'])
    trainable = int(re.search(r'([\d,]+) trainable of', r.stdout).group(1).replace(',', ''))
    last = json.loads(open(os.path.join(out, 'log.jsonl')).read().splitlines()[-1])
    assert last['val_acc'] > 0 and last['val_bits_per_param'] == pytest.approx(3 * 64 * last['val_acc'] / trainable,
                                                                               rel=1e-12)
