"""The faults a long run meets, and what each leaves behind (docs/runs.md#faults-what-each-does-to-a-run): nothing
lost (the best weights, the last finite checkpoint, the logs of the run in out_dir), nothing hung (a stopped process
of two), nothing silently wrong (a diverged loss, a corrupted checkpoint): one line, a non-zero exit status, and a
run that --init_from=resume continues."""

import json
import os
import subprocess
import sys

import pytest
import torch
from test_bad_input import ROOT, TINY, assert_one_line_error, records, run_script


pytestmark = pytest.mark.usefixtures('one_thread')


def train(out, *flags, monkeypatch, capsys):
    return run_script('train.py', TINY + [f'--out_dir={out}', *flags], monkeypatch, capsys)


# ----------------------------------------------------------------------------- the best weights

def test_a_resume_never_replaces_the_best_weights_with_worse(tmp_path, monkeypatch, capsys):
    """A run stopped after writing ckpt_best.pt but before ckpt.pt (simulated: ckpt.pt's best_val_loss set back
    to inf), resumed at a learning rate that makes every later evaluation worse: ckpt_best.pt keeps the lowest
    val_loss of log.jsonl and its weights, because the resumed run reads the loss to beat from ckpt_best.pt."""
    run = str(tmp_path / 'run')
    assert train(run, '--max_iters=8', monkeypatch=monkeypatch, capsys=capsys)[0] == 0
    best_path, ckpt_path = os.path.join(run, 'ckpt_best.pt'), os.path.join(run, 'ckpt.pt')
    before = open(best_path, 'rb').read()
    ckpt = torch.load(ckpt_path, weights_only=True)
    torch.save(dict(ckpt, best_val_loss=float('inf')), ckpt_path)
    code, _, err = train(run, '--init_from=resume', '--max_iters=10', '--eval_interval=5', '--learning_rate=1',
                         monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err
    evals = records(run, 'log.jsonl')
    assert evals[-1]['iter'] == 10 and evals[-1]['val_loss'] > min(r['val_loss'] for r in evals[:-1])
    best = torch.load(best_path, weights_only=True)
    assert best['val_loss'] == min(r['val_loss'] for r in evals)
    assert open(best_path, 'rb').read() == before


# ----------------------------------------------------------------------------- a process of two stopped

# ----------------------------------------------------------------------------- sample.py

# ----------------------------------------------------------------------------- a run that diverges

def test_a_diverged_run_ends_with_one_line(tmp_path, monkeypatch, capsys):
    """--learning_rate=1e4 --grad_clip=0 (which used to end with val_loss nan and exit 0): one line naming the
    iteration, exit 3, ckpt.pt the last finite state."""
    run = str(tmp_path / 'run')
    code, _, err = train(run, '--max_iters=200', '--eval_interval=2', '--warmup_iters=0', '--learning_rate=1e4',
                         '--grad_clip=0', monkeypatch=monkeypatch, capsys=capsys)
    lines = err.strip().splitlines()
    assert code == 3 and len(lines) == 1 and 'the run diverged' in lines[0], (code, err)
    ckpt = torch.load(os.path.join(run, 'ckpt.pt'), weights_only=True)
    assert all(torch.isfinite(w).all() for w in ckpt['model'].values())


@pytest.mark.parametrize('flags, message', [
    (['--log_interval=1', '--eval_interval=1000'], 'the training loss is nan at iteration 5:'),
    (['--log_interval=1000', '--eval_interval=5'], 'the val_loss is nan at iteration 5:'),
    (['--log_interval=1000', '--eval_interval=1000'], 'the weights are not finite at iteration 6 ')])
def test_where_the_nan_is_found(flags, message, tmp_path, monkeypatch, capsys):
    """The weights turn nan in step 4 (the optimizer writes one): the first of the training loss (at a log
    interval), an evaluation's val_loss or a checkpoint's weights to meet it ends the run, exit 3, with ckpt.pt
    the last finite one (iteration 3), from which the run resumes."""
    steps, step = [], torch.optim.AdamW.step

    def nan_at_4(self, *args, **kwargs):
        out = step(self, *args, **kwargs)
        steps.append(1)
        if len(steps) == 4:
            with torch.no_grad():
                self.param_groups[0]['params'][0].fill_(float('nan'))
        return out
    monkeypatch.setattr(torch.optim.AdamW, 'step', nan_at_4)
    run = str(tmp_path / 'run')
    code, _, err = train(run, '--max_iters=20', '--checkpoint_interval=3', *flags, monkeypatch=monkeypatch,
                         capsys=capsys)
    lines = err.strip().splitlines()
    assert code == 3 and len(lines) == 1 and message in lines[0], (code, err)
    assert "ckpt.pt is from iteration 3: continue with --init_from=resume" in lines[0]
    ckpt = torch.load(os.path.join(run, 'ckpt.pt'), weights_only=True)
    assert ckpt['iter_num'] == 3 and all(torch.isfinite(w).all() for w in ckpt['model'].values())
    monkeypatch.setattr(torch.optim.AdamW, 'step', step)
    code, _, err = train(run, '--init_from=resume', '--max_iters=6', monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err


# ----------------------------------------------------------------------------- a corrupted checkpoint

def flip_bytes_in_a_tensor(path, name_part='model'):
    """Flip 8 bytes in the middle of the largest tensor's storage in the torch zip file at path (torch.load
    checks no CRC: it loads the changed weight silently)."""
    import struct
    import zipfile
    with zipfile.ZipFile(path) as z:
        entry = max((i for i in z.infolist() if '/data/' in i.filename), key=lambda i: i.file_size)
    with open(path, 'r+b') as f:
        f.seek(entry.header_offset + 26)
        name_len, extra_len = struct.unpack('<HH', f.read(4))
        at = entry.header_offset + 30 + name_len + extra_len + entry.file_size // 2
        f.seek(at)
        data = f.read(8)
        f.seek(at)
        f.write(bytes(b ^ 0xFF for b in data))


def test_a_corrupted_checkpoint_is_one_line(tmp_path, monkeypatch, capsys):
    """Bytes flipped inside a weight of ckpt.pt: torch.load alone reads it without complaint; resuming, sampling
    or --init_from from it is one line naming the file, exit 2. A checkpoint saved without a checksum (an older
    train.py) still loads."""
    run = str(tmp_path / 'run')
    assert train(run, '--max_iters=4', monkeypatch=monkeypatch, capsys=capsys)[0] == 0
    ckpt_path = os.path.join(run, 'ckpt.pt')
    old = torch.load(ckpt_path, weights_only=True)
    flip_bytes_in_a_tensor(ckpt_path)
    torch.load(ckpt_path, weights_only=True)                           # silently different weights
    result = train(run, '--init_from=resume', '--max_iters=6', monkeypatch=monkeypatch, capsys=capsys)
    assert_one_line_error(result, f'{ckpt_path} is corrupted')
    result = train(str(tmp_path / 'new'), f'--init_from={ckpt_path}', '--max_iters=0', monkeypatch=monkeypatch,
                   capsys=capsys)
    assert_one_line_error(result, f'{ckpt_path} is corrupted')
    del old['sha256']                                                   # as an older train.py saved it
    torch.save(old, ckpt_path)
    code, _, err = train(run, '--init_from=resume', '--max_iters=6', monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, err


# ----------------------------------------------------------------------------- a resume that would not be faithful

def test_resume_refuses_a_checkpoint_of_another_run(tmp_path, monkeypatch, capsys):
    """A ckpt.pt copied from another run (another task) into an out_dir, resumed by the short form (no config):
    one line naming both runs, exit 2, and the folder's logs and best weights as they were; each checkpoint and
    log record names its run."""
    import shutil
    mine, other = str(tmp_path / 'mine'), str(tmp_path / 'other')
    assert train(mine, '--max_iters=4', monkeypatch=monkeypatch, capsys=capsys)[0] == 0
    assert run_script('train.py', ['config/cpu/dyck1_standard.py', *TINY[4:], '--task=dyck1', '--max_iters=4',
                                   f'--out_dir={other}'], monkeypatch, capsys)[0] == 0
    run = torch.load(os.path.join(mine, 'ckpt.pt'), weights_only=True)['run']
    assert {r['run'] for r in records(mine, 'log.jsonl') + records(mine, 'train_log.jsonl')} == {run}
    shutil.copy(os.path.join(other, 'ckpt.pt'), os.path.join(mine, 'ckpt.pt'))
    before = {n: open(os.path.join(mine, n), 'rb').read() for n in ('log.jsonl', 'train_log.jsonl', 'ckpt_best.pt')}
    result = run_script('train.py', [f'--out_dir={mine}', '--init_from=resume', '--max_iters=8'], monkeypatch, capsys)
    assert_one_line_error(result, f"holds records of run {run}: resuming would continue the checkpoint's run")
    assert {n: open(os.path.join(mine, n), 'rb').read() for n in before} == before


def test_resume_refuses_data_that_changed(tmp_path, monkeypatch, capsys):
    """An lm run on prepared data, the data prepared again from another text of the same characters (the same
    vocabulary, so the model still fits): resuming is one line naming what changed, exit 2."""
    import text_data
    from configurator import run_command
    text, data, run = tmp_path / 'text.txt', str(tmp_path / 'data'), str(tmp_path / 'run')

    def prepare(content):
        text.write_text(content)
        run_command(dict(prepare=text_data.prepare_command), ['prepare', 'x', f'--input={text}', '--tokenizer=char',
                    '--test_fraction=0.1', f'--out_dir={data}'])
    prepare('the cat sat on the mat. ' * 100)
    flags = ['--task=lm', f'--lm_data_dir={data}', '--block_size=8', '--n_layer=1', '--n_head=2', '--n_embd=16',
             '--batch_size=4', '--compile=False', '--dtype=float32', '--device=cpu', '--eval_iters=1', '--n_test=8',
             f'--out_dir={run}']
    assert run_script('train.py', flags + ['--max_iters=2'], monkeypatch, capsys)[0] == 0
    prepare('the mat sat on the cat. ' * 120)
    result = run_script('train.py', [f'--out_dir={run}', '--init_from=resume', '--max_iters=4'], monkeypatch, capsys)
    assert_one_line_error(result, f'the data in {data} changed since')
    assert 'inputs_sha256, token counts differ' in result[2]


# ----------------------------------------------------------------------------- the edges of a run

def prepare(args, capsys):
    """python tasks.py prepare ARGS (character tokens) in this process: (exit code, stdout, stderr)."""
    import text_data
    from configurator import run_command
    capsys.readouterr()
    code = 0
    try:
        run_command(dict(prepare=text_data.prepare_command), ['prepare', 'x', '--tokenizer=char', *args])
    except SystemExit as e:
        code = e.code
    return (code, *capsys.readouterr())


def test_prepare_edges_are_one_line(tmp_path, monkeypatch, capsys):
    """tasks.py prepare into an --out_dir that is a file, from a truncated .xz (not called 'not UTF-8'), and on a
    disk that fills while a split is written (the partial .tmp removed): one line each, exit 2."""
    import lzma
    import text_data
    (tmp_path / 'a_file').write_text('x')
    (tmp_path / 'a.txt').write_text('hello world\n' * 50)
    with open(tmp_path / 'cut.txt.xz', 'wb') as f:
        f.write(lzma.compress(b'hello world\n' * 50)[:40])
    assert_one_line_error(prepare([f'--input={tmp_path / "a.txt"}', '--test_fraction=0.1',
                                   f'--out_dir={tmp_path / "a_file"}'], capsys), 'is a file, not a folder')
    assert_one_line_error(prepare([f'--input={tmp_path / "cut.txt.xz"}', '--test_fraction=0.1',
                                   f'--out_dir={tmp_path / "d"}'], capsys), 'cut.txt.xz: a truncated or damaged .xz')
    encode = text_data.encode_parallel

    def fills_the_disk(*args, **kwargs):
        yield next(encode(*args, **kwargs))
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(text_data, 'encode_parallel', fills_the_disk)
    full = tmp_path / 'full'
    code, _, err = prepare([f'--input={tmp_path / "a.txt"}', '--test_fraction=0.1', f'--out_dir={full}'], capsys)
    errors = [line for line in err.splitlines() if 'error' in line or 'Traceback' in line]   # aside: tqdm's bar
    assert code == 2 and len(errors) == 1 and errors[0].endswith(
        f'cannot write {full}: ENOSPC (No space left on device); finished splits are kept, the partial train.bin.tmp '
        f'removed'), err
    assert not [f for f in os.listdir(full) if f.endswith('.tmp')]


@pytest.mark.parametrize('edit, message', [
    (lambda m: m['splits']['train'].pop('tokens'), 'splits.train.tokens is None, not a whole number >= 0'),
    (lambda m: m['splits']['test'].update(documents='12'), "splits.test.documents is '12', not a whole number"),
    (lambda m: m.update(eot=[0]), 'eot is [0], not a whole number >= 0')])
def test_a_hand_edited_meta_json_is_one_line(edit, message, tmp_path, monkeypatch, capsys):
    (tmp_path / 'a.txt').write_text('hello world\n' * 50)
    data = tmp_path / 'data'
    assert prepare([f'--input={tmp_path / "a.txt"}', '--test_fraction=0.1', f'--out_dir={data}'], capsys)[0] == 0
    meta = json.load(open(data / 'meta.json'))
    edit(meta)
    json.dump(meta, open(data / 'meta.json', 'w'))
    result = run_script('train.py', ['--task=lm', f'--lm_data_dir={data}', '--block_size=8', '--n_layer=1',
                                     '--n_head=2', '--n_embd=16', '--batch_size=4', '--compile=False', '--device=cpu',
                                     '--max_iters=0', f'--out_dir={tmp_path / "o"}'], monkeypatch, capsys)
    assert_one_line_error(result, f"{data / 'meta.json'}: {message}")


# ----------------------------------------------------------------------------- memory

@pytest.mark.parametrize('script, args, message', [
    ('universal.py', ['verify', '--H=64', '--L=8'], "the sparse construction's weights (m = 2,841,556,907,745,664) "
                                                   "need more memory than there is: about"),
    ('bayes_paths.py', ['timing', '--P=100000', '--heads=16', '--layers=2'], 'xi and the path kernels C (P² |Π|² '
                                                                            'floats, |Π| = 256): about'),
    ('bayes_paths.py', ['timing', '--heads=64', '--layers=4'], 'heads^layers paths, over 65,536'),
    ('bayes_paths.py', ['timing', '--P=0'], '--P must be >= 1, got 0')])
def test_the_scripts_check_memory_first(script, args, message):
    r = subprocess.run([sys.executable, script, *args], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS='1'), timeout=300)
    assert_one_line_error((r.returncode, r.stdout, r.stderr), message)


# ----------------------------------------------------------------------------- what is there, in words

def test_resume_names_what_is_where_ckpt_pt_should_be(tmp_path, monkeypatch, capsys):
    """A dangling symbolic link or a folder at ckpt.pt, or only ckpt_best.pt and logs: one line naming what is
    there, whose advice deletes nothing (no --overwrite=True, which would delete ckpt_best.pt and the logs)."""
    import shutil
    run = tmp_path / 'run'
    assert train(run, '--max_iters=4', monkeypatch=monkeypatch, capsys=capsys)[0] == 0
    os.rename(run / 'ckpt.pt', tmp_path / 'moved.pt')
    os.symlink(tmp_path / 'gone.pt', run / 'ckpt.pt')
    cases = [f"{run / 'ckpt.pt'} is a symbolic link to {tmp_path / 'gone.pt'}, which does not exist"]
    for setup, message in ((lambda: (os.remove(run / 'ckpt.pt'), os.makedirs(run / 'ckpt.pt')),
                            f"{run / 'ckpt.pt'} is a folder, not a checkpoint"),
                           (lambda: shutil.rmtree(run / 'ckpt.pt'),
                            f"nothing to resume from; train on from the best weights in a new run with "
                            f"--init_from={run / 'ckpt_best.pt'}")):
        result = train(run, '--init_from=resume', '--max_iters=6', monkeypatch=monkeypatch, capsys=capsys)
        assert_one_line_error(result, cases[-1])
        assert 'overwrite' not in result[2]
        setup()
        cases.append(message)
    result = train(run, '--init_from=resume', '--max_iters=6', monkeypatch=monkeypatch, capsys=capsys)
    assert_one_line_error(result, cases[-1])
    assert sorted(os.listdir(run)) == ['.lock', 'ckpt_best.pt', 'log.jsonl', 'train_log.jsonl']


def test_a_config_file_may_import_and_define_helpers(tmp_path, monkeypatch, capsys):
    """`from math import sqrt`, `import math` and a helper function in a config file are not config keys."""
    config = tmp_path / 'helpers.py'
    config.write_text('from math import sqrt\nimport math\n\n\ndef width(k):\n    return 8 * k\n\n\n'
                      'beta2 = 1 - width(int(sqrt(4))) / 1000\nwarmup_iters = math.gcd(4, 6)\n')
    code, out, err = run_script('train.py', [str(config), *TINY[:-3], '--max_iters=0', f'--out_dir={tmp_path / "o"}'],
                                monkeypatch, capsys)
    assert code == 0, err
    saved = torch.load(tmp_path / 'o' / 'ckpt.pt', weights_only=True)['config']
    assert saved['beta2'] == 1 - 16 / 1000 and saved['warmup_iters'] == 2


def test_a_run_that_ends_inside_the_warm_up_says_so(tmp_path, monkeypatch, capsys):
    """max_iters below warmup_iters is valid, but the learning rate never reaches its setting: one note, and
    the run goes on; a seed torch cannot take is one line."""
    code, _, err = train(tmp_path / 'short', '--max_iters=2', '--warmup_iters=10', monkeypatch=monkeypatch,
                         capsys=capsys)
    assert code == 0 and 'note: max_iters=2 ends inside the warm-up (warmup_iters=10)' in err
    code, _, err = train(tmp_path / 'long', '--max_iters=3', monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0 and 'warm-up' not in err
    result = train(tmp_path / 'seed', f'--seed={2 ** 64}', monkeypatch=monkeypatch, capsys=capsys)
    assert_one_line_error(result, f'--seed must be < 2**64, got {2 ** 64}')


# ----------------------------------------------------------------------------- the console

def test_a_closed_console_never_stops_training(tmp_path):
    """`python train.py ... | head -2`: the pipe closes after two lines, the run trains on to its last step with its
    logs and checkpoint written, says once on stderr that stdout went quiet, and exits 0; stdout on a full device
    (/dev/full) does the same."""
    out = tmp_path / 'run'
    args = ' '.join(TINY + ['--max_iters=40', '--eval_interval=20', f'--out_dir={out}'])
    r = subprocess.run(f'{sys.executable} train.py {args} | head -2', shell=True, cwd=ROOT, capture_output=True,
                       text=True, env=dict(os.environ, OMP_NUM_THREADS='1'), timeout=300,
                       executable='/bin/bash')
    assert len(r.stdout.splitlines()) == 2 and 'Traceback' not in r.stderr, r.stderr[-2000:]
    assert records(str(out), 'log.jsonl')[-1]['iter'] == 40 and (out / 'ckpt.pt').is_file()
    assert r.stderr.count('note: stdout failed with EPIPE') == 1, r.stderr[-2000:]
    if os.path.exists('/dev/full'):
        full = tmp_path / 'full'
        with open('/dev/full', 'w') as stdout:
            r = subprocess.run([sys.executable, 'train.py', *TINY, '--max_iters=20', f'--out_dir={full}'], cwd=ROOT,
                               stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300,
                               env=dict(os.environ, OMP_NUM_THREADS='1'))
        assert r.returncode == 0 and 'note: stdout failed with ENOSPC' in r.stderr and 'Traceback' not in r.stderr
        assert records(str(full), 'log.jsonl')[-1]['iter'] == 20


