"""Bad input on every command line ends with exit status 2 and one line `error: ...` on stderr, before any work;
and runs never lose or corrupt work: out_dir protection, resume after a kill (each iteration logged once,
the same losses as an uninterrupted run), checkpoint_interval, ckpt_best.pt.

Most runs are in this process (runpy: no second torch import); a few are subprocesses, as a user runs them."""

import json
import os
import runpy
import signal
import subprocess
import sys
import time

import pytest
import torch
from conftest import script_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ['--task=retrieval', '--retrieval_vocab_size=32', '--retrieval_m_max=4', '--n_test=100', '--n_layer=1',
        '--n_head=2', '--n_embd=16', '--batch_size=8', '--eval_interval=4', '--log_interval=1', '--eval_iters=1',
        '--compile=False', '--dtype=float32', '--device=cpu', '--warmup_iters=2', '--learning_rate=3e-3',
        '--lr_decay_iters=12']


pytestmark = pytest.mark.usefixtures('one_thread')      # the runs in this process, as OMP_NUM_THREADS=1 the others


def run_script(script, args, monkeypatch, capsys):
    """Run script in this process with args; returns (exit code, stdout, stderr). An exception other than
    SystemExit (a traceback) propagates and fails the test."""
    capsys.readouterr()
    monkeypatch.setattr(sys, 'argv', [script, *args])
    monkeypatch.chdir(ROOT)
    code = 0
    try:
        runpy.run_path(os.path.join(ROOT, script), run_name='__main__')
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def subprocess_run(script, args):
    r = subprocess.run([sys.executable, script, *args], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS='1'))
    return r.returncode, r.stdout, r.stderr


def assert_one_line_error(result, message):
    code, _, err = result
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith('error: ') and message in lines[0], (code, err)


def records(out_dir, name):
    with open(os.path.join(out_dir, name)) as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """A finished 8-iteration run (subprocess, once per module): out_dir with ckpt.pt, ckpt_best.pt and logs."""
    out = str(tmp_path_factory.mktemp('trained') / 'run')
    code, _, err = subprocess_run('train.py', TINY + ['--max_iters=8', f'--out_dir={out}'])
    assert code == 0, err[-2000:]
    return out


def bad_files(folder):
    """An empty, a truncated and a random-bytes ckpt.pt, each in its own folder; returns the paths."""
    paths = {}
    with open(os.path.join(ROOT, 'README.md'), 'rb') as f:
        text = f.read(5000)
    for name, content in (('empty', b''), ('random', os.urandom(5000)), ('text', text)):
        os.makedirs(folder / name)
        paths[name] = str(folder / name / 'ckpt.pt')
        with open(paths[name], 'wb') as f:
            f.write(content)
    return paths


# ----------------------------------------------------------------------------- train.py

TRAIN_FLAGS = [
    (['--batch_size=0'], '--batch_size must be >= 1'),
    (['--batch_size=-8'], '--batch_size must be >= 1'),
    (['--eval_interval=0'], '--eval_interval must be >= 1'),
    (['--log_interval=-1'], '--log_interval must be >= 1'),
    (['--eval_iters=0'], '--eval_iters must be >= 1'),
    (['--learning_rate=0'], '--learning_rate must be > 0'),
    (['--learning_rate=-0.001'], '--learning_rate must be > 0'),
    (['--max_iters=-1'], '--max_iters must be >= 0'),
    (['--n_test=-5'], '--n_test must be >= 0'),
    (['--checkpoint_interval=-1'], '--checkpoint_interval must be >= 0'),
    (['--beta2=1.0'], '--beta2 must be in [0, 1)'),
    (['--min_lr_ratio=2'], '--min_lr_ratio must be in [0, 1]'),
    (['--lr_schedule=step'], "--lr_schedule must be 'cosine' or 'linear'"),
    (['--activation_memory_budget=1.5'], '--activation_memory_budget must be in [0, 1]'),
    (['--seed=-1'], '--seed must be >= 0'),
    (['--n_head=0'], '--n_head must be >= 1'),
    (['--n_layer=0'], '--n_layer must be >= 1'),
    (['--dtype=float128'], 'dtype must be'),
    (['--construction=dense'], '--construction must be'),
    (['--micro_batch_size=3'], 'divisible by micro_batch_size=3'),
    (['--init_from=resume', '--overwrite=True'], 'cannot go with --init_from=resume'),
    (['--init_from=no/such/weights.pt'], 'no/such/weights.pt does not exist'),
    (['--variant=mixiT'], 'unknown variant'),
    (['--no_such_key=1'], 'unknown config key'),
    (['--learning_rate=1e999'], 'learning_rate must be a finite number, got inf'),
    (['--weight_decay=-1e999'], 'weight_decay must be a finite number, got -inf'),
    (['--retrieval_m_max=0'], 'retrieval_m_max must be >= 1, got 0'),
    (['--task=memorization', '--memorization_n_keys=-4'], 'memorization_n_keys must be >= 1, got -4'),
    (['--task=dyck1', '--dyck1_format=last', '--dyck1_min_len=50', '--dyck1_max_len=40'],
     'dyck1_min_len=50 must be <= dyck1_max_len=40'),
    (['--task=khop', '--khop_k=5', '--khop_max_k=3'], 'khop_k=5 must be <= khop_max_k=3'),
    (['--task=modular_addition', '--modular_addition_p=7', '--modular_addition_format=sum'],
     "modular_addition format must be 'equals' or 'pair'"),
    (['--task=modular_addition', '--modular_addition_p=7', '--modular_addition_all_pairs=True',
      '--modular_addition_format=pair', '--causal=False'], "--causal=False: modular_addition's inputs hold"),
    (['--ddp_backend=mpi'], "--ddp_backend must be '', 'nccl' or 'gloo'"),
]


@pytest.mark.parametrize('args,message', TRAIN_FLAGS, ids=[' '.join(a) for a, _ in TRAIN_FLAGS])
def test_train_flags(args, message, tmp_path, monkeypatch, capsys):
    out = tmp_path / 'out'
    assert_one_line_error(run_script('train.py', TINY + [f'--out_dir={out}'] + args, monkeypatch, capsys), message)
    assert not out.exists()                                # nothing was done


@pytest.mark.skipif(torch.cuda.is_available(), reason='a machine with CUDA')
def test_train_cuda_without_cuda(tmp_path, monkeypatch, capsys):
    result = run_script('train.py', TINY + ['--device=cuda', f'--out_dir={tmp_path / "o"}'], monkeypatch, capsys)
    assert_one_line_error(result, 'CUDA is not available')


def test_train_refuses_what_memory_cannot_hold(tmp_path, monkeypatch, capsys):
    """The estimate (memory.memory_estimate) is checked before the model is built: one line with both numbers,
    pointing at micro_batch_size."""
    import memory
    monkeypatch.setattr(memory, 'available_memory', lambda device, device_type: 2 ** 10)
    result = run_script('train.py', TINY + ['--max_iters=1', f'--out_dir={tmp_path / "o"}'], monkeypatch, capsys)
    assert_one_line_error(result, 'GiB is available on cpu: lower --micro_batch_size=<n> (now 8')
    assert run_script('train.py', TINY + ['--max_iters=1', '--memory_check=False', f'--out_dir={tmp_path / "o"}'],
                      monkeypatch, capsys)[0] == 0


def test_train_out_dir_is_a_file(tmp_path, monkeypatch, capsys):
    (tmp_path / 'f').write_text('x')
    result = run_script('train.py', TINY + [f'--out_dir={tmp_path / "f"}'], monkeypatch, capsys)
    assert_one_line_error(result, 'is a file, not a folder')
    result = run_script('train.py', TINY + [f'--out_dir={tmp_path / "f" / "sub"}', '--max_iters=0'], monkeypatch,
                        capsys)
    assert_one_line_error(result, 'cannot write in --out_dir=')


def test_train_bad_checkpoint_files(tmp_path, monkeypatch, capsys):
    """An empty, random-bytes or text ckpt.pt: resume and --init_from name the file in one line."""
    for name, path in bad_files(tmp_path).items():
        folder = os.path.dirname(path)
        result = run_script('train.py', TINY + [f'--out_dir={folder}', '--init_from=resume'], monkeypatch, capsys)
        assert_one_line_error(result, path)
        result = run_script('train.py', TINY + [f'--out_dir={tmp_path / "new"}', f'--init_from={path}'], monkeypatch,
                            capsys)
        assert_one_line_error(result, path)
    result = run_script('train.py', TINY + [f'--out_dir={tmp_path / "new"}', f'--init_from={tmp_path}'], monkeypatch,
                        capsys)
    assert_one_line_error(result, 'is a folder')


def test_train_truncated_checkpoint(trained, tmp_path, monkeypatch, capsys):
    os.makedirs(tmp_path / 'cut')
    with open(os.path.join(trained, 'ckpt.pt'), 'rb') as f, open(tmp_path / 'cut' / 'ckpt.pt', 'wb') as g:
        g.write(f.read()[:-1000])
    result = run_script('train.py', TINY + [f'--out_dir={tmp_path / "cut"}', '--init_from=resume'], monkeypatch, capsys)
    assert_one_line_error(result, str(tmp_path / 'cut' / 'ckpt.pt'))


def test_resume_refuses_a_contradicting_flag(trained, monkeypatch, capsys):
    for args, message in [
            (['--n_layer=3'], f'--n_layer=3 contradicts the checkpoint in {trained} (n_layer=1)'),
            (['--task=dyck1'], f'--task=dyck1 contradicts the checkpoint in {trained} (task=retrieval)'),
            (['--retrieval_m_max=5'], 'retrieval_m_max=5 contradicts'),
            (['--n_test=50'], 'n_test=50 contradicts'),
            (['--variant=mixit'], 'variant=mixit contradicts'),
            (['--max_iters=4'], 'before the checkpoint'),
    ]:
        result = run_script('train.py', TINY + [f'--out_dir={trained}', '--init_from=resume', '--max_iters=8'] + args,
                            monkeypatch, capsys)
        assert_one_line_error(result, message)
    result = run_script('train.py', ['config/cpu/dyck1_standard.py', f'--out_dir={trained}', '--init_from=resume'],
                        monkeypatch, capsys)                 # a config file of another task
    assert_one_line_error(result, 'task=dyck1 (in config/cpu/dyck1.py) contradicts')


def test_resume_without_the_config_takes_the_checkpoints(trained, tmp_path, monkeypatch, capsys):
    """Only out_dir and the new max_iters: the task and model come from the checkpoint (no IndexError from a
    default task), the other keys too unless given."""
    import shutil
    run = str(tmp_path / 'run')
    shutil.copytree(trained, run)
    code, out, err = run_script('train.py', [f'--out_dir={run}', '--init_from=resume', '--max_iters=10'], monkeypatch,
                                capsys)
    assert code == 0, err
    assert 'task retrieval' in out and 'resumed at iteration 8' in out
    assert [r['iter'] for r in records(run, 'train_log.jsonl')] == list(range(1, 11))
    assert [r['iter'] for r in records(run, 'log.jsonl')] == [0, 4, 8, 10]


def test_new_run_refuses_an_out_dir_that_holds_one(trained, tmp_path, monkeypatch, capsys):
    import shutil
    run = str(tmp_path / 'run')
    shutil.copytree(trained, run)
    before = {n: open(os.path.join(run, n), 'rb').read() for n in os.listdir(run)}
    result = subprocess_run('train.py', TINY + ['--max_iters=2', f'--out_dir={run}'])
    assert_one_line_error(result, f'{run} holds a run (ckpt.pt, ckpt_best.pt, log.jsonl, train_log.jsonl)')
    assert {n: open(os.path.join(run, n), 'rb').read() for n in os.listdir(run)} == before
    os.remove(os.path.join(run, 'ckpt.pt'))                  # a log alone is a run too
    os.remove(os.path.join(run, 'ckpt_best.pt'))
    assert_one_line_error(run_script('train.py', TINY + ['--max_iters=2', f'--out_dir={run}'], monkeypatch, capsys),
                          'holds a run (log.jsonl, train_log.jsonl)')
    assert_one_line_error(run_script('train.py', TINY + ['--max_iters=2', f'--out_dir={run}', '--init_from=resume'],
                                     monkeypatch, capsys),
                          'start a new run with --out_dir=<another folder>, which keeps them')
    code, _, err = run_script('train.py', TINY + ['--max_iters=2', f'--out_dir={run}', '--overwrite=True'], monkeypatch,
                              capsys)
    assert code == 0, err
    assert [r['iter'] for r in records(run, 'train_log.jsonl')] == [1, 2]     # the old records are gone
    assert [r['iter'] for r in records(run, 'log.jsonl')] == [0, 2]
    assert torch.load(os.path.join(run, 'ckpt.pt'), weights_only=True)['iter_num'] == 2


# ----------------------------------------------------------------------------- resume, checkpoints

def test_resume_after_a_kill(tmp_path, monkeypatch, capsys):
    """SIGKILL a run after its first checkpoints, resume it: every iteration is logged once, and the losses
    and evaluations are those of an uninterrupted run."""
    killed, whole = str(tmp_path / 'killed'), str(tmp_path / 'whole')
    p = subprocess.Popen([sys.executable, 'train.py', *TINY, '--max_iters=100000', '--checkpoint_interval=3',
                          f'--out_dir={killed}'], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, OMP_NUM_THREADS='1'))
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            if os.path.isfile(os.path.join(killed, 'ckpt.pt')) and len(open(os.path.join(killed, 'train_log.jsonl'))
                                                                         .readlines()) >= 7:
                break
            time.sleep(0.05)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert os.path.isfile(os.path.join(killed, 'ckpt.pt')), 'no checkpoint within 120 s'
    at = torch.load(os.path.join(killed, 'ckpt.pt'), weights_only=True)['iter_num']
    logged = len(open(os.path.join(killed, 'train_log.jsonl')).readlines())
    assert at % 3 == 0 and logged >= at                      # the kill came after the checkpoint's iteration
    target = at + 5
    code, _, err = run_script('train.py', TINY + [f'--max_iters={target}', f'--out_dir={killed}',
                                                  '--init_from=resume'], monkeypatch, capsys)
    assert code == 0, err
    code, _, err = run_script('train.py', TINY + [f'--max_iters={target}', f'--out_dir={whole}'], monkeypatch, capsys)
    assert code == 0, err
    a, b = records(whole, 'train_log.jsonl'), records(killed, 'train_log.jsonl')
    assert [r['iter'] for r in b] == [r['iter'] for r in a] == list(range(1, target + 1))
    assert [r['loss'] for r in b] == pytest.approx([r['loss'] for r in a], rel=1e-6)
    a, b = records(whole, 'log.jsonl'), records(killed, 'log.jsonl')
    assert [r['iter'] for r in b] == [r['iter'] for r in a]
    assert [r['val_loss'] for r in b] == pytest.approx([r['val_loss'] for r in a], rel=1e-6)


def test_logged_loss_after_resume_averages_the_steps_since(tmp_path, monkeypatch, capsys):
    """log_interval=4, a checkpoint at iteration 6: the record at 8 of the resumed run averages steps 7 and 8,
    the one at 12 steps 9..12, as the per-step losses of an uninterrupted run give them."""
    steps, part = str(tmp_path / 'steps'), str(tmp_path / 'part')
    assert run_script('train.py', TINY + ['--max_iters=12', f'--out_dir={steps}'], monkeypatch, capsys)[0] == 0
    loss = {r['iter']: r['loss'] for r in records(steps, 'train_log.jsonl')}
    flags = TINY + ['--log_interval=4', '--checkpoint_interval=6', f'--out_dir={part}']
    assert run_script('train.py', flags + ['--max_iters=6'], monkeypatch, capsys)[0] == 0
    assert [r['iter'] for r in records(part, 'train_log.jsonl')] == [4]
    assert run_script('train.py', flags + ['--max_iters=12', '--init_from=resume'], monkeypatch, capsys)[0] == 0
    got = {r['iter']: r['loss'] for r in records(part, 'train_log.jsonl')}
    assert sorted(got) == [4, 8, 12]
    for it, since in ((4, range(1, 5)), (8, (7, 8)), (12, range(9, 13))):
        assert got[it] == pytest.approx(sum(loss[i] for i in since) / len(since), rel=1e-6), it


@pytest.mark.parametrize('interval,written', [(None, [4, 8, 10]), (3, [3, 6, 9, 10]), (0, [10])])
def test_checkpoint_interval_and_best(interval, written, tmp_path, monkeypatch, capsys):
    """ckpt.pt every checkpoint_interval iterations (None: eval_interval; 0: none) and always at the end;
    ckpt_best.pt whenever val_loss improves, holding that evaluation's weights."""
    saves, real_save = [], torch.save

    def save(obj, f, *args, **kwargs):
        saves.append(('best' if 'val_loss' in obj else 'ckpt', obj['iter_num']))
        return real_save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, 'save', save)
    out = str(tmp_path / 'out')
    flags = TINY + ['--max_iters=10', '--learning_rate=1e-2', f'--out_dir={out}'] + (
        [f'--checkpoint_interval={interval}'] if interval is not None else [])
    code, _, err = run_script('train.py', flags, monkeypatch, capsys)
    assert code == 0, err
    assert [it for kind, it in saves if kind == 'ckpt'] == written
    evals = records(out, 'log.jsonl')
    best_so_far = [r['iter'] for i, r in enumerate(evals) if r['val_loss'] < min([e['val_loss'] for e in evals[:i]],
                                                                                 default=float('inf'))]
    assert [it for kind, it in saves if kind == 'best'] == best_so_far
    best = torch.load(os.path.join(out, 'ckpt_best.pt'), weights_only=True)
    low = min(evals, key=lambda r: r['val_loss'])
    assert best['iter_num'] == low['iter'] and best['val_loss'] == low['val_loss']
    monkeypatch.setattr(torch, 'save', real_save)
    code, _, err = run_script('train.py', TINY + ['--max_iters=0', f'--init_from={out}/ckpt_best.pt',
                                                  f'--out_dir={tmp_path / "again"}'], monkeypatch, capsys)
    assert code == 0, err                                    # its weights evaluate to the same val_loss
    assert records(str(tmp_path / 'again'), 'log.jsonl')[0]['val_loss'] == pytest.approx(low['val_loss'], rel=1e-6)


# ----------------------------------------------------------------------------- what clusters do to runs

@pytest.mark.parametrize('fault', [OSError(28, 'No space left on device'),
                                   RuntimeError('[enforce fail at inline_container.cc:664] . unexpected pos 0 vs 64')])
def test_a_full_disk_keeps_the_last_checkpoint(fault, tmp_path, monkeypatch, capsys):
    """A checkpoint write that fails (ENOSPC, or torch's RuntimeError for a short write): one line naming the
    file and the error, no .tmp left, and the previous ckpt.pt as it was."""
    run = str(tmp_path / 'run')
    assert run_script('train.py', TINY + ['--max_iters=4', f'--out_dir={run}'], monkeypatch, capsys)[0] == 0
    before = open(os.path.join(run, 'ckpt.pt'), 'rb').read()

    def save(obj, f, *args, **kw):
        f.write(b'partial')
        raise fault
    monkeypatch.setattr(torch, 'save', save)
    result = run_script('train.py', TINY + ['--max_iters=8', f'--out_dir={run}', '--init_from=resume'], monkeypatch,
                        capsys)
    assert_one_line_error(result, f"cannot write {os.path.join(run, 'ckpt')}")
    assert ('ENOSPC (No space left on device)' if isinstance(fault, OSError) else 'a full disk?') in result[2]
    assert sorted(os.listdir(run)) == ['.lock', 'ckpt.pt', 'ckpt_best.pt', 'log.jsonl', 'train_log.jsonl']
    assert open(os.path.join(run, 'ckpt.pt'), 'rb').read() == before


# ----------------------------------------------------------------------------- sample.py and bench.py

BENCH = ['--n_layer=1', '--n_embd=16', '--n_head=2', '--vocab_size=64', '--block_size=16', '--batch_size=2',
         '--compile=False', '--dtype=float32', '--device=cpu']


@pytest.mark.parametrize('args,message', [
    (['--batch_size=0'], '--batch_size must be >= 1'), (['--batch_size=-2'], '--batch_size must be >= 1'),
    (['--vocab_size=0'], '--vocab_size must be >= 1'), (['--n_head=0'], '--n_head must be >= 1'),
    (['--micro_batch_size=-1'], '--micro_batch_size must be >= 0'), (['--iters=5'], 'at least 10'),
    (['--activation_memory_budget=-1'], '--activation_memory_budget must be in [0, 1], got -1.0'),
    (['--n_layer=48', '--n_embd=4096', '--n_head=32', '--vocab_size=50304', '--block_size=4096',
      '--batch_size=4096'], 'this model and batch need about'),
])
def test_bench_flags(args, message, monkeypatch, capsys):
    assert_one_line_error(run_script('bench.py', BENCH + args, monkeypatch, capsys), message)


# ----------------------------------------------------------------------------- tasks.py prepare, prepared data

@pytest.fixture
def byte_tokenizer(tmp_path):
    """A .tiktoken file of the 256 single-byte tokens (no merges): GPT-2's format, fast to build."""
    import base64
    path = str(tmp_path / 'bytes.tiktoken')
    with open(path, 'wb') as f:
        f.writelines(base64.b64encode(bytes([b])) + b' %d\n' % b for b in range(256))
    return path


def prepare(args, tokenizer, capsys):
    """python tasks.py prepare ARGS in this process: (exit code, stdout, stderr)."""
    import text_data
    from configurator import run_command
    capsys.readouterr()
    code = 0
    try:
        run_command(dict(prepare=text_data.prepare_command), ['prepare', *args, f'--tokenizer={tokenizer}'])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err                                           # on success err holds tqdm's bars


def test_prepare_rejects_empty_input_and_broken_csv(tmp_path, byte_tokenizer, capsys):
    (tmp_path / 'empty.txt').write_text('\n \n')
    (tmp_path / 'text_test.txt').write_text('some test text\n')
    (tmp_path / 'open.csv').write_text('label,text\n1,"fine"\n0,"never closed\nmore text\n')
    (tmp_path / 'stray.csv').write_text('label,text\n1,"fine"\n0,"closed"here\n1,ok\n')
    (tmp_path / 'header.csv').write_text('label,text\n')
    (tmp_path / 'lines.txt').write_text('1 good\n\n0 bad\npositive nice\n')
    for args, message in [
            ([f'--input={tmp_path / "empty.txt"},{tmp_path / "text_test.txt"}'],
             f'{tmp_path / "empty.txt"}: empty input'),
            (['--task=sentiment', f'--input={tmp_path / "empty.txt"}', '--test_fraction=0.5'], 'empty input file'),
            (['--task=sentiment', f'--input={tmp_path / "open.csv"}', '--test_fraction=0.5'],
             f'{tmp_path / "open.csv"}, line 3: bad CSV'),
            (['--task=sentiment', f'--input={tmp_path / "stray.csv"}', '--test_fraction=0.5'],
             f'{tmp_path / "stray.csv"}, line 3: bad CSV'),
            (['--task=sentiment', f'--input={tmp_path / "header.csv"}', '--test_fraction=0.5'], 'a header but no rows'),
            (['--task=sentiment', f'--input={tmp_path / "lines.txt"}', '--test_fraction=0.5'],
             f'{tmp_path / "lines.txt"}, line 4: expected'),          # the file's line, blank lines counted
            (['--test_fraction=1.5', f'--input={tmp_path / "text_test.txt"}'], 'test_fraction must be in [0, 1)'),
    ]:
        assert_one_line_error(prepare(['x', f'--out_dir={tmp_path / "data"}', *args], byte_tokenizer, capsys), message)


def test_prepare_redoes_what_other_inputs_made(tmp_path, byte_tokenizer, capsys):
    """meta.json records the options and a hash of the inputs; a changed input or option prepares again,
    the same ones skip."""
    train, test, data = tmp_path / 'a.txt', tmp_path / 'a_test.txt', str(tmp_path / 'data')
    train.write_text('hello world\n' * 50)
    test.write_text('test text\n' * 20)
    args = ['x', f'--input={train},{test}', f'--out_dir={data}']
    code, out, _ = prepare(args, byte_tokenizer, capsys)
    meta = json.load(open(os.path.join(data, 'meta.json')))
    assert code == 0 and meta['splits']['train']['tokens'] == 601 and len(meta['recipe']['inputs_sha256']) == 64
    code, out, _ = prepare(args, byte_tokenizer, capsys)
    assert out.count('done already') == 2
    train.write_text('hello world\n' * 60)                            # the same file name, other text
    code, out, _ = prepare(args, byte_tokenizer, capsys)
    assert 'inputs_sha256 differ' in out and 'done already' not in out
    assert json.load(open(os.path.join(data, 'meta.json')))['splits']['train']['tokens'] == 721
    assert os.path.getsize(os.path.join(data, 'train.bin')) == 2 * 721


def test_data_files_are_checked_against_meta(tmp_path, byte_tokenizer, monkeypatch, capsys):
    """train.py on an lm dataset whose train.bin is not the size meta.json records, or whose meta.json is
    broken: one line naming the file."""
    import shutil
    (tmp_path / 'a.txt').write_text('hello world, the cat sat on the mat\n' * 30)
    (tmp_path / 'a_test.txt').write_text('test text of the cat\n' * 20)
    data = str(tmp_path / 'data')
    assert prepare(['x', f'--input={tmp_path / "a.txt"},{tmp_path / "a_test.txt"}', f'--out_dir={data}'],
                   byte_tokenizer, capsys)[0] == 0
    flags = ['--task=lm', '--block_size=16', '--n_layer=1', '--n_head=2', '--n_embd=16', '--batch_size=4',
             '--compile=False', '--dtype=float32', '--device=cpu', '--max_iters=0', f'--out_dir={tmp_path / "o"}']
    cut = str(tmp_path / 'cut')
    shutil.copytree(data, cut)
    with open(os.path.join(cut, 'train.bin'), 'r+b') as f:
        f.truncate(1000)
    assert_one_line_error(run_script('train.py', flags + [f'--lm_data_dir={cut}'], monkeypatch, capsys),
                          f"{os.path.join(cut, 'train.bin')}: 1,000 bytes, but meta.json records")
    with open(os.path.join(cut, 'meta.json'), 'w') as f:
        f.write('{"task": "lm", "splits": ')
    assert_one_line_error(run_script('train.py', flags + [f'--lm_data_dir={cut}'], monkeypatch, capsys),
                          f"{os.path.join(cut, 'meta.json')}: not a readable meta.json")
    small = str(tmp_path / 'small')                    # meta.json's vocabulary smaller than the token ids
    shutil.copytree(data, small)
    meta = json.load(open(os.path.join(small, 'meta.json')))
    json.dump(dict(meta, vocab_size=100), open(os.path.join(small, 'meta.json'), 'w'))
    assert_one_line_error(run_script('train.py', flags + [f'--lm_data_dir={small}'], monkeypatch, capsys),
                          f"{os.path.join(small, 'train.bin')}: token id 256 is outside meta.json's vocabulary of "
                          f"100")                                # 256: <|endoftext|> of the byte tokenizer
    json.dump(dict(meta, dtype='uint32'), open(os.path.join(small, 'meta.json'), 'w'))
    assert_one_line_error(run_script('train.py', flags + [f'--lm_data_dir={small}'], monkeypatch, capsys),
                          "dtype 'uint32'")
    code, _, err = run_script('train.py', flags + [f'--lm_data_dir={data}'], monkeypatch, capsys)
    assert code == 0, err


# ----------------------------------------------------------------------------- experiments/gpu/paper.sh

@pytest.mark.parametrize('stage, env, message', [
    ('bogus', {}, "name a stage: sentiment, depth, depth16, addition"),
    ('khop_qk', {'VARIANTS': 'std0.028 width2048'},
     "khop_qk's VARIANTS are std0.028, lr5e-4, width1024 (got 'width2048')"),
    ('dyck1', {'VARIANTS': 'mixit mixit256'},
     "dyck1's VARIANTS are standard, frozen_qk, frozen_mlp, mixit, mixit_256 (got 'mixit256')"),
    ('universal_b', {'VARIANTS': 'random'}, "universal_b takes no VARIANTS (got 'random')"),
    ('khop', {'SEEDS': '1,2'}, "SEEDS: whole numbers only (got '1,2')"),
    ('dyck1', {'SEEDS': '2'}, "dyck1 takes no SEEDS (got '2'; TAG=_seed2 EXTRA=--seed=2 makes a run with seed 2)"),
    ('khop', {'LAYERS': '4'}, "khop takes no LAYERS (got '4')"),
    ('khop', {'MMAX': '10'}, "khop takes no MMAX (got '10')"),
    ('covariance', {'VARIANTS': 'standard'},
     "covariance's VARIANTS are random, mixit, mixit_nosink, mixit_depthscaled, random_depthscaled (got 'standard')"),
    ('retrieval', {'RETRIEVAL_ITERS': '3k'}, "RETRIEVAL_ITERS must be a positive whole number (got '3k')"),
    ('memorization', {'MPS': 'yes'}, "MPS is 0 or 1 (got 'yes')"),
    ('memorization', {'DRY': 'true'}, "DRY is 0 or 1 (got 'true')"),
    ('addition', {'JOBS': '0'}, "JOBS must be a positive whole number (got '0')"),
    ('memorization', {'CARRY_MB': '0'}, "CARRY_MB must be a positive whole number (got '0')"),
    ('khop', {'TAG': '_lr 5e-4'}, "TAG may hold letters, digits, '.', '_' and '-' only (got '_lr 5e-4')"),
    ('universal_a', {'TAG': '_x'}, "TAG names train.py runs; universal_a's universal.py runs are named by UFLAGS"),
])
def test_paper_sh_names_a_stage_or_setting_it_lacks(stage, env, message, tmp_path):
    """The GPU stages' script rejects a stage or a setting it does not have before it starts any run."""
    logs = tmp_path / 'logs'
    env = script_env(LOGS=str(logs), **env)
    r = subprocess.run(['bash', 'experiments/gpu/paper.sh', stage], cwd=ROOT, env=env, capture_output=True, text=True)
    assert_one_line_error((r.returncode, r.stdout, r.stderr), message)
    assert not (logs / 'paper1').exists()


@pytest.mark.parametrize('env, message', [
    ({'MODES': 'alone timesliced'}, "MODES are alone, shared, mps, alone_prefetch0 (got 'timesliced')"),
    ({'N': '0'}, "N must be a positive whole number (got '0')"),
    ({'CONFIG': 'config/memorisation_standard.py'}, 'CONFIG: no file config/memorisation_standard.py'),
])
def test_sharing_sh_names_a_setting_it_lacks(env, message, tmp_path):
    """The GPU-sharing measurement rejects a mode, a count or a config it cannot use before it starts a run."""
    logs = tmp_path / 'logs'
    env = script_env(LOGS=str(logs), **env)
    r = subprocess.run(['bash', 'experiments/gpu/sharing.sh'], cwd=ROOT, env=env, capture_output=True, text=True)
    assert_one_line_error((r.returncode, r.stdout, r.stderr), message)
    assert not logs.exists()


@pytest.mark.parametrize('args, message', [
    (['--paper=1'], 'run-name prefixes, one --plot=<file>.png, --pace and one --mfu=<fraction>, got --paper=1'),
    (['--pace', '--mfu=30'], "--mfu is a fraction of the peak in (0, 1], got '30'"),
    (['--mfu=high'], "--mfu is a fraction of the peak in (0, 1], got 'high'"),
    (['imbd'], 'no paper-size run under results/paper1/paper'),
    (['lm', '--plot=curves.pdf'], "--plot writes a .png, got 'curves.pdf'"),
    (['lm', '--plot=no_such_folder/lm.png'], '--plot: no folder no_such_folder for no_such_folder/lm.png')])
def test_report_names_a_flag_or_run_it_lacks(args, message):
    """The paper-size runs' report takes run-name prefixes, --plot, --pace and --mfu; a flag it lacks, a prefix
    that names no run, a plot it cannot write or an MFU outside (0, 1] is one line."""
    assert_one_line_error(subprocess_run('-m', ['experiments.gpu.report', *args]), message)


def test_report_names_a_log_line_that_is_not_json(tmp_path, capsys):
    from experiments.gpu import report
    run = tmp_path / 'paper1' / 'paper' / 'khop_standard_1'
    run.mkdir(parents=True)
    (run / 'log.jsonl').write_text('{"iter": 0, "val_acc": 0.1}\n{"iter": 250, "val_a\n')
    with pytest.raises(SystemExit) as e:
        report.runs(root=str(tmp_path))
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and 'khop_standard_1/log.jsonl: line 2 is not JSON' in err[0], err


@pytest.mark.parametrize('args, message', [
    ([], 'usage: python -m experiments.paper1.breakdown out_dir/ckpt.pt'),
    (['--help'], 'usage: python -m experiments.paper1.breakdown out_dir/ckpt.pt'),
    (['no_such_run/ckpt.pt'], 'no_such_run/ckpt.pt does not exist')])
def test_breakdown_names_a_checkpoint_it_lacks(args, message):
    """experiments/paper1/breakdown.py takes one checkpoint; none, a flag or a missing file is one line."""
    assert_one_line_error(subprocess_run('-m', ['experiments.paper1.breakdown', *args]), message)
