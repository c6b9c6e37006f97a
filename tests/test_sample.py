"""Tests for sample.py: its flags and files (one line for each wrong one), text printed as it is drawn, the window
that slides past block_size, memory checked first, and a quiet end into a closed pipe, on Ctrl-C and in an ASCII
locale."""

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest
import torch

from test_bad_input import ROOT, assert_one_line_error, bad_files, run_script, subprocess_run, trained


@pytest.fixture(scope='module')
def char_lm(tmp_path_factory):
    return make_char_lm(tmp_path_factory.mktemp('char_lm'))


def make_char_lm(root):
    """Character-level data (prepared) and two untrained checkpoints of a language model on it, block_size 16:
    rotary (standard) and learned positions (random), under the folder root (a pathlib.Path). Returns
    {'data': folder, variant: out_dir}."""
    import text_data
    from configurator import run_command
    from model import GPT, GPTConfig
    (root / 'text.txt').write_text('the cat sat on the mat. ' * 200)
    run_command(dict(prepare=text_data.prepare_command), ['prepare', 'x', f'--input={root / "text.txt"}',
                '--tokenizer=char', '--test_fraction=0.1', f'--out_dir={root / "data"}'])
    vocab = json.load(open(root / 'data' / 'meta.json'))['vocab_size']
    found = {'data': str(root / 'data')}
    for variant in ('standard', 'random'):
        cfg = GPTConfig(vocab_size=vocab, block_size=16, n_layer=1, n_head=2, n_embd=16, variant=variant)
        os.makedirs(root / variant)
        torch.save(dict(model=GPT(cfg).state_dict(), model_args=cfg.to_keys(), config=dict(
            task='lm', lm_data_dir=found['data'], lm_compact_vocab=False, block_size=16)), root / variant / 'ckpt.pt')
        found[variant] = str(root / variant)
    return found


@pytest.mark.parametrize('flags', [['--max_new_tokens=1000000000'], ['--num_samples=1000000000',
                                                                      '--max_new_tokens=5']])
def test_sample_prints_as_it_goes(char_lm, flags):
    """A rotary model asked for a billion tokens, or a billion samples: text appears within seconds (each
    sample printed as it grows, one sample at a time), and a note says that the window slides."""
    p = subprocess.Popen([sys.executable, 'sample.py', f"--out_dir={char_lm['standard']}", '--start=the', *flags],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, OMP_NUM_THREADS='1'))
    out, t0 = b'', time.time()
    try:
        while len(out) < 40 and time.time() < t0 + 60 and p.poll() is None:
            if select.select([p.stdout], [], [], 1)[0]:
                out += os.read(p.stdout.fileno(), 64)
    finally:
        p.kill()
        err = p.communicate()[1].decode()
    assert out.startswith(b'the') and len(out) >= 40, (out, err)
    assert ('the window slides' in err) == ('--max_new_tokens=1000000000' in flags), err


def test_sample_bounds_max_new_tokens_by_the_positions(char_lm, monkeypatch, capsys):
    """Learned positions see block_size tokens: a billion new tokens is one line naming how many fit."""
    result = run_script('sample.py', [f"--out_dir={char_lm['random']}", '--start=the', '--max_new_tokens=1000000000'],
                        monkeypatch, capsys)
    assert_one_line_error(result, "exceed this model's context of 16 tokens (learned positions / MixiT's mixing): "
                                  "at most 13 new ones")


def test_sample_edges_are_one_line_or_work(char_lm, tmp_path, monkeypatch, capsys):
    """sample.py at a tiny temperature samples the most likely tokens (no inf / nan reaching torch.multinomial);
    nan weights, a seed of 2**64 or data of another vocabulary are one line each, exit 2."""
    code, out, err = run_script('sample.py', [f"--out_dir={char_lm['standard']}", '--start=the', '--temperature=1e-30',
                                              '--num_samples=1', '--max_new_tokens=5'], monkeypatch, capsys)
    assert code == 0 and 'Traceback' not in err, err
    assert_one_line_error(run_script('sample.py', [f"--out_dir={char_lm['standard']}", f'--seed={2 ** 64}'],
                                     monkeypatch, capsys), '--seed must be < 2**64')
    ckpt = torch.load(os.path.join(char_lm['standard'], 'ckpt.pt'), weights_only=True)
    ckpt['model']['lm_head.weight'].fill_(float('nan'))
    os.makedirs(tmp_path / 'nan')
    torch.save(ckpt, tmp_path / 'nan' / 'ckpt.pt')
    assert_one_line_error(run_script('sample.py', [f"--out_dir={tmp_path / 'nan'}", '--start=the'], monkeypatch, capsys),
                          "ckpt.pt: its weights are not finite (lm_head.weight holds nan")
    import text_data
    from configurator import run_command
    (tmp_path / 'other.txt').write_text('abcdefghijklmnopqrstuvwxyz ' * 50)
    run_command(dict(prepare=text_data.prepare_command), ['prepare', 'x', f'--input={tmp_path / "other.txt"}',
                '--tokenizer=char', '--test_fraction=0.1', f'--out_dir={tmp_path / "other"}'])
    result = run_script('sample.py', [f"--out_dir={char_lm['standard']}", f"--data_dir={tmp_path / 'other'}"],
                        monkeypatch, capsys)
    assert_one_line_error(result, f"{tmp_path / 'other'} has a vocabulary of 28 tokens but the model 12")


def test_sample_checks_memory_first(char_lm, monkeypatch, capsys):
    import memory
    monkeypatch.setattr(memory, 'available_memory', lambda device, device_type: 2 ** 10)
    assert_one_line_error(run_script('sample.py', [f"--out_dir={char_lm['standard']}", '--start=the'], monkeypatch,
                                     capsys), "the model and one sample's forward pass need more memory than there "
                                              "is: about")


def test_sample_ends_quietly_into_a_closed_pipe_on_ctrl_c_and_in_an_ascii_locale(char_lm):
    """sample.py | head: no traceback, status 141 (a closed pipe, as `yes | head`); Ctrl-C: one line, status 130;
    an ASCII locale: characters it cannot encode are written with replacement."""
    env = dict(os.environ, OMP_NUM_THREADS='1')
    base = f"{sys.executable} sample.py --out_dir={char_lm['standard']} --start=the"
    r = subprocess.run(f'{base} --max_new_tokens=100000 --num_samples=50 | head -c 20; exit ${{PIPESTATUS[0]}}',
                       shell=True, executable='/bin/bash', cwd=ROOT, capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 141 and r.stderr.count('\n') <= 1 and 'Traceback' not in r.stderr, r.stderr
    p = subprocess.Popen([sys.executable, 'sample.py', f"--out_dir={char_lm['standard']}", '--start=the',
                          '--max_new_tokens=1000000'], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    out = p.stdout.read(10)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert out and p.returncode == 130 and 'Traceback' not in err.decode() and 'interrupted' in err.decode()
    r = subprocess.run([sys.executable, '-c', "import configurator; configurator.guard_console('exit'); "
                        "print('ROMEO: caf\\u00e9 \\u00a7'); print('after')"], cwd=ROOT, capture_output=True,
                       env=dict(env, PYTHONIOENCODING='ascii', LC_ALL='C'))
    assert r.returncode == 0 and r.stdout == b'ROMEO: caf? ?\nafter\n' and not r.stderr


def test_sample_flags_and_files(trained, tmp_path, monkeypatch, capsys):
    bad = bad_files(tmp_path)
    cases = [(['--temperature=0'], '--temperature must be > 0'), (['--temperature=-1'], '--temperature must be > 0'),
             (['--top_k=-1'], '--top_k must be >= 0'), (['--max_new_tokens=-1'], '--max_new_tokens must be >= 0'),
             (['--num_samples=0'], '--num_samples must be >= 1'),
             ([f'--start=FILE:{tmp_path}/missing.txt'], f'--start=FILE:{tmp_path}/missing.txt: no such file'),
             ([f'--out_dir={tmp_path}/nothing'], 'no checkpoint at'),
             ([f'--out_dir={trained}'], "is a 'retrieval' model; sampling needs a language model"),
             ([f'--out_dir={trained}', '--ckpt=ckpt_best.pt'], "is a 'retrieval' model")]
    cases += [([f'--out_dir={os.path.dirname(p)}'], p) for p in bad.values()]
    for args, message in cases:
        assert_one_line_error(run_script('sample.py', args, monkeypatch, capsys), message)
    assert_one_line_error(subprocess_run('sample.py', ['--temperature=0']), '--temperature must be > 0')
