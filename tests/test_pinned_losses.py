"""train.py's losses, pinned: six steps of each variant in float64 on a tiny retrieval task give these training
and evaluation losses (results/performance/core_split: the same runs in float32 and bfloat16 too). float64, so
that another CPU's kernels change them by rounding far below the tolerance, while any change to the model, the
data stream, the loss, the optimizer or the schedule moves them by far more."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ['--task=retrieval', '--retrieval_vocab_size=32', '--retrieval_m_max=4', '--n_test=200', '--n_layer=2',
        '--n_head=2', '--n_embd=32', '--batch_size=16', '--eval_interval=3', '--log_interval=1', '--eval_iters=2',
        '--device=cpu', '--warmup_iters=2', '--learning_rate=3e-3', '--max_iters=6', '--dtype=float64',
        '--compile=False']

# {variant: (train_log.jsonl's loss at iterations 1..6, log.jsonl's val_loss at iterations 0, 3, 6)}
PINNED = {
    'standard': ([3.499508777973996, 3.4766825440311857, 3.45146529199249, 3.3728005713537392, 3.418995959009691,
                  3.2727266258708054], [3.4635723136728727, 3.4005403320093457, 3.329392309549092]),
    'frozen_qk': ([3.499508777973996, 3.476697399286881, 3.4514750655147655, 3.372749584063904, 3.4189714497812007,
                   3.273062016430004], [3.4635723136728727, 3.400517435049414, 3.3295832822027354]),
    'frozen_mlp': ([3.499508777973996, 3.4793607976640994, 3.4531671431278337, 3.37877520468476, 3.422151762819059,
                    3.2849979867825603], [3.4635723136728727, 3.4038187658993104, 3.3372285774959476]),
    'mixit': ([3.537695796371837, 3.4282316284137777, 3.403232489264441, 3.000861053103298, 3.5189440031601986,
               3.102380885424918], [3.5699165070761523, 3.2557681425631673, 3.1066376465560386]),
    'random': ([3.457507619055125, 3.4248894281091258, 3.4370704962832828, 3.38129161076535, 3.386075520853541,
                3.3961133454199546], [3.4649102713377555, 3.4103360463167074, 3.3599318539959904]),
    'universal': ([3.4654898060719117, 3.465628942130818, 3.465749804090181, 3.465256050115741, 3.464740734409908,
                   3.464983157409186], [3.465631801561496, 3.4650841459327575, 3.464593253824471]),
}


def read(path, key):
    with open(path) as f:
        return [record[key] for record in map(json.loads, f)]


@pytest.mark.parametrize('variant', PINNED)
def test_losses_are_the_pinned_ones(variant, tmp_path):
    out = tmp_path / variant
    r = subprocess.run([sys.executable, 'train.py', *TINY, f'--variant={variant}', f'--out_dir={out}'], cwd=ROOT,
                       capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert r.returncode == 0, r.stderr[-2000:]
    train, val = PINNED[variant]
    assert read(out / 'train_log.jsonl', 'loss') == pytest.approx(train, rel=1e-9)
    assert read(out / 'log.jsonl', 'val_loss') == pytest.approx(val, rel=1e-9)
