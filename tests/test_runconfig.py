"""runconfig.py: a train.py config resolved into its task, its model's arguments, its checks, and the folder a
run writes."""

import hashlib
import os
import subprocess
import sys

import pytest

from runconfig import check_train_flags, identity_keys, run_out_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_flags_that_change_what_is_trained_get_a_folder_of_their_own():
    config = dict(out_dir='out/cpu/dyck1_standard', task='dyck1', dyck1_max_len=40, variant='standard', seed=0,
                  max_iters=100, device='cpu')
    assert {'variant', 'n_layer', 'seed', 'dyck1_max_len', 'task'} <= identity_keys(config)
    assert 'max_iters' not in identity_keys(config) and 'device' not in identity_keys(config)
    file = 'config/cpu/dyck1_standard.py'
    base = dict(out_dir=file, task=file, variant=file)
    assert run_out_dir(config, base) == 'out/cpu/dyck1_standard'
    assert run_out_dir(config, dict(base, max_iters='flag', device='flag')) == 'out/cpu/dyck1_standard'
    changed = dict(config, variant='frozen_qk', seed=2)
    assert run_out_dir(changed, dict(base, variant='flag', seed='flag')) == \
        'out/cpu/dyck1_standard-variant_frozen_qk-seed_2'
    assert run_out_dir(changed, dict(base, variant='flag', out_dir='flag')) == 'out/cpu/dyck1_standard'  # asked for
    assert run_out_dir(dict(config, out_dir='out/', n_layer=4), {'n_layer': 'flag'}) == 'out-n_layer_4'


def digest(folder):
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), 'rb') as f:
            h.update(name.encode() + f.read())
    return h.hexdigest()


def test_a_changed_variant_never_touches_the_configs_own_run(tmp_path):
    """python train.py config/cpu/dyck1_standard.py --variant=frozen_qk beside the standard run: its own folder, named
    in the run's first line; the standard run's files stay byte for byte; the same command again meets its own run
    and says what to do, safe choices first."""
    config = tmp_path / 'dyck1_standard.py'
    config.write_text(f"include({os.path.join(ROOT, 'config', 'cpu', 'dyck1_standard.py')!r})\n"
                      f"out_dir = {str(tmp_path / 'dyck1_standard')!r}\n")
    fast = ['--max_iters=2', '--eval_interval=2', '--n_test=16', '--batch_size=8', '--compile=False',
            '--dtype=float32', '--device=cpu']
    env = dict(os.environ, OMP_NUM_THREADS='1')
    go = lambda *a: subprocess.run([sys.executable, 'train.py', str(config), *fast, *a], cwd=ROOT,
                                   capture_output=True, text=True, env=env, timeout=300)
    assert go().returncode == 0
    before = digest(tmp_path / 'dyck1_standard')
    r = go('--variant=frozen_qk')
    assert r.returncode == 0, r.stderr
    mine = tmp_path / 'dyck1_standard-variant_frozen_qk'
    assert r.stdout.splitlines()[0].startswith(f'{mine} | task dyck1 | variant frozen_qk')
    assert (mine / 'log.jsonl').is_file() and digest(tmp_path / 'dyck1_standard') == before
    r = go('--variant=frozen_qk')
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith(f'error: {mine} holds a run')
    assert err[0].index('--out_dir=<another folder>') < err[0].index('--init_from=resume') < \
        err[0].index('--overwrite=True would delete it')


@pytest.mark.parametrize('key, value', [('batch_size', 0), ('seed', -1), ('learning_rate', 0.0),
                                        ('min_lr_ratio', 2.0), ('construction', 'dense')])
def test_settings_out_of_range_are_named(key, value):
    c = dict(batch_size=8, eval_interval=1, log_interval=1, eval_iters=1, max_iters=10, micro_batch_size=0,
             eval_batch_size=0, n_train=0, n_test=0, warmup_iters=0, lr_decay_iters=0, weight_decay=0.0,
             grad_clip=1.0, seed=0, task_seed=0, checkpoint_interval=None, prefetch=None, learning_rate=1e-3,
             activation_memory_budget=1.0, min_lr_ratio=0.1, beta1=0.9, beta2=0.95, lr_schedule='cosine',
             train_order='replacement', ddp_backend='', construction='', out_dir='out', init_from='scratch',
             overwrite=False)
    assert check_train_flags(c) == []
    with pytest.raises(ValueError, match=f'--{key} must be'):
        check_train_flags(dict(c, **{key: value}))
