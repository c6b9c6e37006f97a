"""
Paper 1's sweeps at CPU scale: each a knob turned on one CPU config, every value a train.py run whose log is
kept in results/paper1/<sweep>_<variant>_<value>/ (log.jsonl, command.sh, machine.txt with the CPU from lscpu; the
covariance sweeps' runs also covariance.json from `sde.py covariance`).

    depth          Table 5:  MixiT and the random transformer at 2, 4, 8 (3 seeds) and 16 layers, decimal addition
                             (width 128; the random transformer also at 256, 384 and the paper's 512), other lrs and
                             schedules; MixiT in the depth-scaled block (depth_alpha=1, 3 seeds), with a skip
                             scaling of 0.97 at 16 layers, and with 5- and 10-digit numbers (10 digits also on a
                             4,500-step schedule and at width 256)
    heads          Table 11: MixiT with 4, 16, 64, 128 heads, Dyck-1 and decimal addition; Dyck-1 with 128 heads
                             also at 4 layers, in the depth-scaled block and on a 4,500-step schedule, alone and
                             together (3 seeds)
    mmax           Fig. 2:   retrieval accuracy against m_max for the four variants
    covariance     Table 6:  last-layer token covariance of random, MixiT and sink-free MixiT language models by
                             depth, trained for 100 steps, and for 600 at lr 1e-3 (MixiT at 8 to 32 layers also
                             5e-4, at 32 2e-4); all three in the authors' depth-scaled block (depth_alpha=1) for
                             600 at 1e-3
    covariance512  Table 6:  the same models at initialisation at Table 8's shape (width 512, the GPT-2
                             vocabulary, 2 to 32 layers) on data/gpu_lm (bash experiments/gpu/run.sh data), and
                             MixiT, with and without its sink, in the depth-scaled block; no step is taken
                             (max_iters=0), so the covariance reported is the initialised model's
    lm             Tables 2, 9: WikiText-2 test log-perplexity of the four variants over 3 seeds, and of MixiT
                             in the authors' depth-scaled block; the four in both blocks at 12 layers
    imdb           Table 3:  sentiment of whole IMDb reviews, test accuracy of the four variants over 3 seeds
    yelp           Table 3:  sentiment of Yelp sentences, test accuracy of the four variants, one seed

    python -m experiments.paper1.sweeps list                  # every run, and whether its log is here
    python -m experiments.paper1.sweeps run --sweep=depth     # train the runs that have no log yet, one at a time
    python -m experiments.paper1.sweeps table                 # markdown tables beside the paper's numbers
    python -m experiments.paper1.sweeps plot --out=assets/paper1_sweeps.png

Runs use one torch thread each (OMP_NUM_THREADS=1) on the CPU, or --threads of them (a long run alone on the
machine); `run` skips a run whose log is already here.
"""

import json
import os
import shutil
import subprocess
import sys

from configurator import fail, run_command

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, 'results', 'paper1')      # the runs' folders

VARIANTS = ('standard', 'frozen_qk', 'frozen_mlp', 'mixit')


def depth_scaled(variant):
    """The flags that train `variant` in the depth-scaled block of the authors' Slurm language-model runner
    (depth_alpha 1 for every variant; MixiT's MLP also with their LeakyReLU slope, activation_cminus 1)."""
    return '--depth_alpha=1' + (' --activation_cminus=1' if variant == 'mixit' else '')


def depth_run(variant, L, seed=1, lr='', steps=1500, width=128, scaled=False, skip='', digits=3, heads=None):
    """A Table 5 run (name, config, flags): config/cpu/table5_<variant>.py at L layers, with the seed (for MixiT
    also the mixing matrices'), and where they differ from the config, the width (heads of width 4), the peak lr,
    the schedule's length, the block (scaled: the depth-scaled block, depth_alpha 1, the setting the authors'
    depth runner passes to depth.py, 0 by default; skip: MixiT's skip_scaling s, the config's √0.5), the
    numbers' digits (the paper's 10) and the heads (width / 4 unless given; the paper's 128 at width 128: heads of
    width 1); the name marks each, e.g. depth_mixit_seed3_lr1e-3_3000steps_16 or depth_mixit_depthscaled_10digits_8."""
    name = (f'depth_{variant}' + ('_depthscaled' if scaled else '') + (f'_skip{skip}' if skip else '')
            + (f'_{digits}digits' if digits != 3 else '') + (f'_w{width}' if width != 128 else '')
            + (f'_h{heads}' if heads else '')
            + (f'_seed{seed}' if seed != 1 else '') + (f'_lr{lr}' if lr else '')
            + (f'_{steps}steps' if steps != 1500 else '') + f'_{L}')
    flags = (f'--n_layer={L} --seed={seed}' + (f' --mixit_seed={seed}' if variant == 'mixit' else '')
             + (f' --n_embd={width}' if width != 128 else '')
             + (f' --n_head={heads or width // 4}' if heads or width != 128 else '')
             + (f' --learning_rate={lr}' if lr else '') + (f' --max_iters={steps}' if steps != 1500 else '')
             + (' --depth_alpha=1' if scaled else '') + (f' --skip_scaling={skip}' if skip else '')
             + (f' --decimal_addition_n_digits={digits}' if digits != 3 else ''))
    return name, f'config/cpu/table5_{variant}.py', flags


def dyck1_run(L=2, steps=1500, scaled=False, seed=1):
    """A Dyck-1 MixiT run with 128 heads (name, config, flags): config/cpu/dyck1_mixit.py at L layers, and where
    they differ from the config, the schedule's length, the block (scaled: the depth-scaled block) and the seed
    (also the mixing matrices'); the name marks each, e.g. heads_dyck1_mixit_depthscaled_4layers_4500steps_128."""
    name = ('heads_dyck1_mixit' + ('_depthscaled' if scaled else '') + (f'_{L}layers' if L != 2 else '')
            + (f'_{steps}steps' if steps != 1500 else '') + (f'_seed{seed}' if seed != 1 else '') + '_128')
    flags = ('--n_head=128' + (f' {depth_scaled("mixit")}' if scaled else '') + (f' --n_layer={L}' if L != 2 else '')
             + (f' --max_iters={steps}' if steps != 1500 else '')
             + (f' --seed={seed} --mixit_seed={seed}' if seed != 1 else ''))
    return name, 'config/cpu/dyck1_mixit.py', flags


def mmax_run(variant, m, steps=1000, lr='', qkstd='', seed=None, vocab=None):
    """A Fig. 2 run (name, config, flags): config/cpu/retrieval_<variant>.py at m_max = m, and where they differ
    from the sweep's 1,000 steps and the config, the peak lr, the W_Q, W_K init std (qkstd; Frozen-QK's score
    scale is 0.0566), the seed and the vocabulary V (m_max <= V/2 distinct keys; the config's V is 64); the name
    marks each, e.g. mmax_standard_qkstd0.0566_seed2_3000steps_32."""
    name = (f'mmax_{variant}' + (f'_V{vocab}' if vocab else '') + (f'_lr{lr}' if lr else '')
            + (f'_qkstd{qkstd}' if qkstd else '') + (f'_seed{seed}' if seed else '')
            + (f'_{steps}steps' if steps != 1000 else '') + f'_{m}')
    flags = (f'--retrieval_m_max={m} --max_iters={steps}' + (f' --retrieval_vocab_size={vocab}' if vocab else '')
             + (f' --learning_rate={lr}' if lr else '') + (f' --qk_init_std={qkstd}' if qkstd else '')
             + (f' --seed={seed}' if seed else ''))
    return name, f'config/cpu/retrieval_{variant}.py', flags


SWEEPS = {   # sweep: (what the paper varies, [(run name, config, flags), ...])
    'depth': ('layers', [depth_run(v, L, seed) for v in ('mixit', 'random') for seed in (1, 2, 3) for L in (2, 4, 8, 16)
                         if L < 16 or seed == 1 or (v, seed) == ('mixit', 2)] +
              [depth_run('mixit', L, seed, lr=lr)
               for seed, lr, L in ((1, '3e-3', 8), (1, '3e-3', 16), (1, '1e-3', 16), (1, '1e-3', 8), (3, '1e-3', 8),
                                   (2, '1e-3', 8), (2, '1e-3', 16), (3, '1e-3', 16), (4, '1e-3', 16),
                                   (5, '1e-3', 16))] +
              [depth_run('mixit', L, seed, steps=4500) for seed, L in ((3, 8), (1, 8), (3, 4), (1, 16))] +
              [depth_run('mixit', 16, 1, lr='1e-3', steps=4500), depth_run('mixit', 16, 3, lr='1e-3', steps=3000)] +
              [depth_run('random', L, seed, width=width, steps=steps)
               for L, seed, width, steps in ((2, 1, 512, 1500), (2, 1, 512, 4500), (4, 1, 512, 1500), (2, 1, 128, 4500),
                                             (2, 1, 128, 13500), (2, 2, 512, 4500), (2, 1, 256, 4500),
                                             (2, 1, 384, 4500), (2, 2, 384, 4500), (2, 3, 384, 4500),
                                             (4, 1, 384, 4500), (4, 2, 384, 4500), (4, 3, 384, 4500),
                                             (8, 1, 384, 4500), (8, 2, 384, 4500), (4, 1, 512, 4500),
                                             (4, 2, 512, 4500), (2, 3, 512, 4500), (4, 3, 512, 4500),
                                             (8, 3, 384, 4500))] +
              [depth_run('mixit', L, seed, scaled=True) for seed in (1, 2, 3) for L in (2, 4, 8, 16)] +
              [depth_run('mixit', 16, seed, skip='0.97') for seed in (1, 2)] +
              [depth_run('mixit', 2, 1, digits=digits) for digits in (5, 10)] +
              [depth_run('mixit', L, seed, scaled=True, digits=10) for seed in (1, 2, 3, 4, 5) for L in (2, 4, 8, 16)] +
              [depth_run('mixit', 8, 1, scaled=True, digits=10, heads=128)] +
              [depth_run('mixit', L, seed, scaled=True, digits=10, steps=4500)
               for L in (2, 4) for seed in (1, 2, 3, 4, 5)] +
              [depth_run('mixit', L, seed, scaled=True, digits=10, width=256)
               for L, seed in ((2, 1), (2, 2), (2, 3), (2, 5), (4, 1), (4, 5))] +
              # the random transformer's depth-scaled block is the config's at 4 layers (base_n_layer): not rerun
              [depth_run('random', 2, 1, width=384, steps=4500, scaled=True)]),
    'heads': ('heads', [(f'heads_{task}_mixit' + (f'_seed{seed}' if seed > 1 else '') + f'_{H}',
                         f'config/cpu/{config}.py',
                         f'--n_head={H}' + (f' --seed={seed} --mixit_seed={seed}' if seed > 1 else ''))
                        for task, config, width in (('dyck1', 'dyck1_mixit', 128),
                                                    ('decimal_addition', 'table11_decimal_addition_mixit', 64))
                        for H in (4, 16, 64, 128) if H <= width       # heads of width >= 1
                        for seed in ((1, 2, 3) if H <= 64 else (1,))] +
             [dyck1_run(L, steps, scaled, seed) for L, steps, scaled, seed in
              ((2, 1500, True, 1), (4, 1500, False, 1), (4, 1500, True, 1), (2, 4500, False, 1), (2, 4500, True, 1),
               *((4, 4500, scaled, seed) for seed in (1, 2, 3) for scaled in (False, True)))]),
    'mmax': ('m_max', [mmax_run(v, m) for v in VARIANTS for m in (2, 4, 8, 16)] +
             [mmax_run('standard', 16, steps=3000), mmax_run('standard', 16, steps=3000, lr='3e-3'),
              mmax_run('standard', 16, steps=10000), mmax_run('frozen_qk', 32), mmax_run('frozen_mlp', 32)] +
             [mmax_run(v, m, qkstd='0.0566') for m in (16, 32) for v in ('standard', 'frozen_mlp')] +
             [mmax_run('frozen_qk', 32, steps=3000, seed=seed) for seed in (None, 2)] +
             [mmax_run(variant, 32, steps=steps, qkstd='0.0566', seed=seed, lr=lr)
              for variant, steps, seed, lr in (('standard', 3000, None, ''), ('standard', 3000, 2, ''),
                                               ('standard', 3000, None, '3e-3'), ('standard', 6000, None, ''),
                                               ('frozen_mlp', 3000, None, ''))] +
             [mmax_run(variant, 32, steps=3000, qkstd=qkstd, lr='3e-4')                 # a lower peak lr
              for variant, qkstd in (('standard', '0.0566'), ('standard', ''), ('frozen_qk', ''),
                                     ('frozen_mlp', '0.0566'))] +
             [mmax_run('standard', 16, steps=3000, lr='3e-4')] +
             [mmax_run(variant, m, steps=3000, qkstd=qkstd, lr='3e-4', vocab=128, seed=seed)   # up to 64 keys
              for m, variant, qkstd, seed in ((64, 'standard', '0.0566', None), (64, 'frozen_qk', '', None),
                                              (48, 'standard', '0.0566', None), (48, 'frozen_qk', '', None),
                                              (48, 'standard', '0.0566', 2), (48, 'frozen_qk', '', 2),
                                              (48, 'frozen_mlp', '0.0566', None), (48, 'frozen_mlp', '0.0566', 2),
                                              (48, 'frozen_mlp', '', None), (48, 'standard', '', None),
                                              (40, 'frozen_qk', '', None), (40, 'frozen_mlp', '0.0566', None),
                                              (40, 'standard', '0.0566', None), (40, 'frozen_qk', '', 2),
                                              (40, 'frozen_mlp', '0.0566', 2),
                                              (56, 'standard', '0.0566', None), (56, 'frozen_qk', '', None),
                                              (56, 'frozen_mlp', '0.0566', None))] +
             [mmax_run(variant, 48, steps=3000, qkstd=qkstd, vocab=128)
              for variant, qkstd in (('frozen_qk', ''), ('frozen_mlp', '0.0566'))] +
             [mmax_run(variant, m, steps=6000, qkstd=qkstd, lr='3e-4', vocab=128)
              for m in (40, 48) for variant, qkstd in (('frozen_qk', ''), ('frozen_mlp', '0.0566'))] +
             [mmax_run(variant, 48, steps=6000, qkstd='0.0566', lr='3e-4', vocab=128, seed=seed)
              for variant, seed in (('standard', None), ('frozen_mlp', 2), ('standard', 2))] +
             [mmax_run('frozen_qk', 48, steps=6000, lr='3e-4', vocab=128, seed=2)] +
             [mmax_run(variant, 64, steps=6000, qkstd=qkstd, lr='3e-4', vocab=128, seed=seed) for seed in (None, 2)
              for variant, qkstd in (('standard', '0.0566'), ('frozen_qk', ''), ('frozen_mlp', '0.0566'))]),
    'covariance': ('layers', [(f'covariance_{v}_{L}', f'config/cpu/table6_{v}.py', f'--n_layer={L}')
                              for v in ('random', 'mixit') for L in (2, 4, 8, 16)] +
                   [(f'covariance_mixit_nosink_{L}', 'config/cpu/table6_mixit.py',
                     f'--n_layer={L} --mixit_sink_head=False') for L in (2, 4, 8, 16)] +
                   [(f'covariance_{v}_lr1e-3_600steps_{L}', f'config/cpu/table6_{config}.py',
                     f'--n_layer={L}{flags} --learning_rate=1e-3 --max_iters=600 --warmup_iters=60')
                    for v, config, flags, depths in (('random', 'random', '', (2, 4, 8, 16, 32)),
                                                     ('mixit', 'mixit', '', (2, 4, 8, 16)),
                                                     ('mixit_nosink', 'mixit', ' --mixit_sink_head=False',
                                                      (2, 4, 8, 16)))
                    for L in depths] +
                   [(f'covariance_{v}_lr{lr}_600steps_{L}', 'config/cpu/table6_mixit.py',
                     f'--n_layer={L}{flags} --learning_rate={lr} --max_iters=600 --warmup_iters=60')
                    for lr, depths in (('5e-4', (8, 16, 32)), ('2e-4', (32,)))
                    for v, flags in (('mixit', ''), ('mixit_nosink', ' --mixit_sink_head=False'))
                    for L in depths] +
                   [(f'covariance_{v}_depthscaled_lr1e-3_600steps_{L}', f'config/cpu/table6_{config}.py',
                     f'--n_layer={L} {depth_scaled(config)}{flags} --learning_rate=1e-3 --max_iters=600 '
                     '--warmup_iters=60')
                    for v, config, flags in (('mixit', 'mixit', ''), ('random', 'random', ''),
                                             ('mixit_nosink', 'mixit', ' --mixit_sink_head=False'))
                    for L in (2, 4, 8, 16, 32)]),
    'covariance512': ('layers', [(f'covariance512_{v}_{L}', f'config/wikitext_{config}.py',
                                  f'{flags}--n_layer={L} --lm_data_dir=data/gpu_lm --n_test=64 --max_iters=0 '
                                  '--eval_iters=1 --eval_batch_size=16 --micro_batch_size=16 --compile=False '
                                  '--dtype=float32')
                                 for v, config, flags in (('random', 'standard', '--variant=random '),
                                                          ('mixit', 'mixit', ''),
                                                          ('mixit_nosink', 'mixit', '--mixit_sink_head=False '),
                                                          ('mixit_depthscaled', 'mixit', depth_scaled('mixit') + ' '),
                                                          ('mixit_nosink_depthscaled', 'mixit',
                                                           depth_scaled('mixit') + ' --mixit_sink_head=False '))
                                 for L in (2, 4, 8, 16, 32)]),
    'lm': ('seed', [(f'lm_{v}_{seed}', f'config/cpu/wikitext_{v}.py', f'--seed={seed}')
                    for v in VARIANTS for seed in (1, 2, 3)] +
                   [(f'lm_mixit_depthscaled_{seed}', 'config/cpu/wikitext_mixit.py',
                     f'--seed={seed} {depth_scaled("mixit")}') for seed in (1, 2, 3)] +
                   [(f'lm_{v}{tag}_12layers_{seed}', f'config/cpu/wikitext_{v}.py',
                     f'--seed={seed} --n_layer=12{flags}')
                    for v in VARIANTS for seed in (1, 2, 3)
                    for tag, flags in (('', ''), ('_depthscaled', ' ' + depth_scaled(v)))]),
    'imdb': ('seed', [(f'imdb_{v}_{seed}', f'config/cpu/imdb_{v}.py', f'--seed={seed}')
                      for v in VARIANTS for seed in (1, 2, 3)] +
             [(f'imdb_mixit_causal_{seed}', 'config/cpu/imdb_mixit.py', f'--seed={seed} --causal=True')
              for seed in (1, 2, 3)] +
             [(f'imdb_{v}_1200steps_1', f'config/cpu/imdb_{v}.py',
               '--seed=1 --max_iters=1200 --warmup_iters=200 --eval_interval=300') for v in ('standard', 'mixit')] +
             [(f'imdb_{v}_bidirectional_1', f'config/cpu/imdb_{v}.py', '--seed=1 --causal=False')
              for v in ('standard', 'frozen_qk')] +
             [(f'imdb_mixit_mixitseed{m}_1', 'config/cpu/imdb_mixit.py', f'--seed=1 --mixit_seed={m}')
              for m in (1, 2)]),
    'yelp': ('seed', [(f'yelp_{v}_1', f'config/cpu/yelp_sentences_{v}.py', '--seed=1') for v in VARIANTS]),
}
# paper 1's numbers: Table 5 (decimal addition accuracy %), Table 11 (MixiT accuracy %, width 512), Table 6
# (token covariance, units of 1e-2); Fig. 2 is a plot without printed values
PAPER = {
    'depth': {'mixit': {2: 100, 8: 100, 16: 100}, 'random': {2: 100, 8: 23.53, 16: 22.88}},
    'heads': {'decimal_addition_mixit': {4: 34.71, 16: 34.70, 64: 50.72, 256: 91.87},
              'dyck1_mixit': {4: 77.93, 16: 81.68, 64: 89.38, 256: 91.83}},
    'covariance': {'random': {2: 0.218, 4: 1.450, 8: 2.075, 16: 1.946, 32: 5.438},
                   'mixit': {2: 0.088, 4: 0.260, 8: 0.210, 16: 0.154, 32: 0.104}},
}
PAPER['covariance512'] = PAPER['covariance']


def command(name, config, flags, threads=1):
    """The run's train.py command line, on `threads` torch threads."""
    return f"OMP_NUM_THREADS={threads} python train.py {config} {flags} --device=cpu --out_dir=out/sweeps/{name}"


def read_run(name):
    """The run's final log record (with covariance.json's numbers under 'covariance'), or None."""
    path = os.path.join(RESULTS, name, 'log.jsonl')
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        final = [json.loads(line) for line in f if line.strip()][-1]
    cov = os.path.join(RESULTS, name, 'covariance.json')
    if os.path.isfile(cov):
        with open(cov) as f:
            final['covariance'] = json.load(f)
    return final


def split_name(sweep, name):
    """(series, value) of a run of sweep: its name without the sweep and the value (e.g. 'frozen_qk', 16)."""
    rest, value = name[len(sweep) + 1:].rsplit('_', 1)
    return rest, int(value)


def series(sweep):
    """{series name: {value: final record}} of a sweep's runs that have logs (split_name)."""
    out = {}
    for name, _, _ in SWEEPS[sweep][1]:
        final = read_run(name)
        if final is not None:
            rest, value = split_name(sweep, name)
            out.setdefault(rest, {})[value] = final
    return out


def parse_name(name):
    """(sweep, series, value) of a sweep run's folder name, or None."""
    for sweep, (_, runs) in SWEEPS.items():
        if any(name == run for run, _, _ in runs):
            return (sweep, *split_name(sweep, name))
    return None


def metric(sweep, final):
    """The number a sweep reports for a run: test accuracy %, the trained covariance in units of 1e-2 (that of
    the initialised model for covariance512, whose runs take no step), or the test log-perplexity (lm)."""
    if sweep.startswith('covariance'):
        return 100 * final['covariance']['trained']['covariance']
    return final['val_loss'] if sweep == 'lm' else 100 * final['val_acc']


UNITS = dict(covariance='covariance, 1e-2', covariance512='covariance at initialisation, 1e-2',
             lm='test log-perplexity, nats')


def mean_sd(xs):
    m = sum(xs) / len(xs)
    return m, (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else float('nan')


def list_runs():
    """Every sweep run, whether its log is committed, and its command (as committed, else on one thread)."""
    for sweep, (_, runs) in SWEEPS.items():
        for name, config, flags in runs:
            done = read_run(name)
            cmd = (open(os.path.join(RESULTS, name, 'command.sh')).readline().strip() if done
                   else command(name, config, flags))
            print(f"{'done' if done else '    '}  {name:32s} {cmd}")
    return 0


def run(sweep='',       # the sweep to run: depth, heads, mmax, covariance, covariance512, lm, imdb or yelp
        only='',        # comma-separated run names within it ('' = all)
        threads=1):     # torch threads per run
    """Train a sweep's runs that have no log here, one at a time, and keep their logs and commands."""
    if sweep not in SWEEPS:
        fail(f"--sweep must be one of {', '.join(SWEEPS)}, got {sweep!r}")
    if not isinstance(threads, int) or threads < 1:
        fail(f"--threads must be a positive integer, got {threads!r}")
    wanted = set(only.split(',')) - {''}
    unknown = wanted - {name for name, _, _ in SWEEPS[sweep][1]}
    if unknown:
        fail(f"--only names runs that are not in sweep {sweep}: {', '.join(sorted(unknown))}")
    for name, config, flags in SWEEPS[sweep][1]:
        if (wanted and name not in wanted) or read_run(name):
            continue
        cmd = command(name, config, flags, threads)
        print(f"{name}: {cmd}", flush=True)
        out_dir = os.path.join(ROOT, 'out', 'sweeps', name)
        shutil.rmtree(out_dir, ignore_errors=True)
        steps = [cmd]
        if sweep.startswith('covariance'):
            steps.append(f"OMP_NUM_THREADS={threads} python sde.py covariance out/sweeps/{name}/ckpt.pt "
                         f"--save=out/sweeps/{name}/covariance.json")
        for step in steps:
            if subprocess.run(step, shell=True, cwd=ROOT).returncode:
                fail(f"{name} failed: {step}")
        dest = os.path.join(RESULTS, name)
        os.makedirs(dest, exist_ok=True)
        for file in ('log.jsonl', 'covariance.json'):
            if os.path.isfile(os.path.join(out_dir, file)):
                shutil.copy(os.path.join(out_dir, file), dest)
        with open(os.path.join(dest, 'command.sh'), 'w') as f:
            f.write('\n'.join(steps) + '\n')
        with open(os.path.join(dest, 'machine.txt'), 'w') as f:
            f.write(cpu_model() + '\n')
    return 0


def cpu_model():
    """The CPU a run trained on, as lscpu names it ('Model name: AMD EPYC'), for the run's machine.txt."""
    try:
        out = subprocess.run(['lscpu'], capture_output=True, text=True).stdout
    except OSError:
        out = ''
    return next((' '.join(line.split()) for line in out.splitlines() if line.startswith('Model name')),
                'Model name: unknown (no lscpu)')


def table():
    """Print each sweep as a markdown table: a row per series, a column per value, the paper's row below."""
    for sweep, (knob, _) in SWEEPS.items():
        rows = series(sweep)
        if not rows:
            continue
        paper = PAPER.get(sweep, {})
        values = sorted({v for r in list(rows.values()) + list(paper.values()) for v in r})
        seeds = knob == 'seed'                       # seeds: a mean and sample standard deviation too
        digits = 3 if sweep == 'lm' else 2
        print(f"\n{sweep}: {UNITS.get(sweep, 'test accuracy %')}\n")
        print(f"| {sweep} | " + ' | '.join(f"{knob} = {v}" for v in values) + (' | mean ± sd |' if seeds else ' |'))
        print('|' + '---|' * (len(values) + 1 + seeds))
        def row(label, cells):
            print(f"| {label} | " + ' | '.join(cells) + ' |')

        inits = merge_inits({name: {v: 100 * r['covariance']['init']['covariance'] for v, r in runs.items()}
                             for name, runs in rows.items()}) if sweep == 'covariance' else {}
        for name, runs in rows.items():
            cells = [f"{metric(sweep, runs[v]):.{digits}f}" if v in runs else '' for v in values]
            if seeds:
                m, sd = mean_sd([metric(sweep, r) for r in runs.values()])
                cells.append(f"{m:.{digits}f} ± {sd:.{digits}f}" if len(runs) > 1 else '')
            row(name, cells)
            if name in inits:                         # the same models at their initialisation, once per model
                row(f"{name}, at init", [f"{inits[name][v]:.2f}" if v in inits[name] else '' for v in values])
            if name in paper:
                row(f"{name}, paper", [f"{paper[name][v]}" if v in paper[name] else '' for v in values])
    return 0


def merge_inits(inits, rel=1e-6):
    """{series: {knob: number}} of the covariance sweep's models at initialisation, each series merged into the
    first one before it that shares a knob and agrees (to rel) at every knob both have: two series whose
    training alone differs (the learning rate, the steps) share their initialised models, shown once, under the
    first series' name, with the knobs of both."""
    merged = {}
    for name, init in inits.items():
        owner = next((o for o, seen in merged.items() if set(seen) & set(init) and all(
            abs(init[x] - seen[x]) <= rel * max(abs(init[x]), abs(seen[x])) for x in set(seen) & set(init))), None)
        if owner is None:
            merged[name] = dict(init)
        else:
            merged[owner].update(init)
    return merged


def flag_values(flags):
    """{key: value} of a run's '--key=value' flags."""
    return dict(flag[2:].split('=', 1) for flag in flags.split())


def facet(sweep, config, flags):
    """(panel, series, seed) under which plot() draws a run of the depth or mmax sweep, whose runs vary more than
    the knob: depth a panel per variant (MixiT's 5- and 10-digit runs one more), a series per peak lr, schedule,
    heads and block (MixiT) or width, schedule and block (the random transformer); mmax a panel per schedule and
    peak lr, a series per variant, W_Q, W_K init scale and, past 3,000 steps, schedule."""
    f = flag_values(flags)
    seed = int(f.get('seed', 1))
    if sweep == 'depth':
        steps = int(f.get('max_iters', 1500))
        block = (', depth-scaled block' if 'depth_alpha' in f else
                 f", skip scaling {f['skip_scaling']}" if 'skip_scaling' in f else '')
        if 'mixit' in config:
            heads = f", {f['n_head']} heads" if 'n_head' in f else ''
            label = f"lr {f.get('learning_rate', '1e-2')}, {steps:,} steps{heads}{block}"
            digits = f.get('decimal_addition_n_digits')   # the paper's longer numbers: a panel of their own
            if digits:
                return 'depth: MixiT, 5 and 10 digits', f'{digits} digits, {label}', seed
            return 'depth: MixiT', label, seed
        return 'depth: random transformer', f"width {f.get('n_embd', 128)}, {steps:,} steps{block}", seed
    variant = os.path.basename(config)[len('retrieval_'):-len('.py')]
    steps, lr = int(f['max_iters']), f.get('learning_rate', '1e-3')
    series = variant + (" from Frozen-QK's scale" if 'qk_init_std' in f else '')
    if steps == 1000:
        return 'mmax: 1,000 steps', series, seed
    series += f', {steps:,} steps' if steps != 3000 else ''
    if lr == '3e-4':
        return 'mmax: peak lr 3e-4, 3,000 steps or more', series, seed
    return 'mmax: 3,000 steps or more', series + (f', lr {lr}' if lr != '1e-3' else ''), seed


def panels():
    """[(sweep, title, {series: {value: [metric per seed]}}, {label: {value: paper's number}})] for plot(): one
    panel per sweep that has runs, the depth and mmax sweeps split by facet(), the others' runs that differ only
    in `_seed<k>` drawn as one series."""
    out = {}
    for sweep, (_, runs) in SWEEPS.items():
        for name, config, flags in runs:
            final = read_run(name)
            if final is None:
                continue
            rest, value = split_name(sweep, name)
            title, label = (facet(sweep, config, flags)[:2] if sweep in ('depth', 'mmax')
                            else (sweep, rest.split('_seed')[0]))    # a setting's seeds: one series
            if title not in out:
                out[title] = (sweep, {}, {})
            out[title][1].setdefault(label, {}).setdefault(value, []).append(metric(sweep, final))
            if sweep == 'covariance':                 # the same models at their initialisation, dotted
                init = 100 * final['covariance']['init']['covariance']
                out[title][1].setdefault(f'{label}, at init', {}).setdefault(value, []).append(init)
            paper = PAPER.get(sweep, {}).get('mixit' if 'MixiT' in title else 'random' if 'random' in title
                                             else rest)
            if paper and SWEEPS[sweep][0] != 'seed':
                out[title][2][f'{label}, paper' if title == sweep else 'paper'] = paper
    for sweep, lines, _ in out.values():              # a model at initialisation drawn once (merge_inits)
        inits = {name: {x: sum(ys) / len(ys) for x, ys in runs.items()}
                 for name, runs in lines.items() if name.endswith(', at init')}
        merged = merge_inits(inits)
        for name in inits:
            if name in merged:
                lines[name] = {x: [y] for x, y in merged[name].items()}
            else:
                del lines[name]
    return [(sweep, title, lines, paper) for title, (sweep, lines, paper) in out.items()]


def plot(out='assets/paper1_sweeps.png'):   # where the figure goes
    """One panel per sweep that has runs (the depth and mmax sweeps one per facet()): the metric against the
    knob, a line per series through the mean of its seeds, each seed a marker, the paper's dashed (the covariance
    panel also the models at initialisation, dotted); a seeds sweep: mean ± sd per series. A panel with eight
    series or more, or a series' name of 40 characters or more, has its legend in an empty panel of its own."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    todo = panels()
    if not todo:
        fail("no sweep has runs under results/paper1/ yet")
    crowded = [title for sweep, title, lines, paper in todo      # each gets a legend panel
               if SWEEPS[sweep][0] != 'seed' and (len(lines) + len(paper) >= 8 or max(map(len, lines)) >= 40)]
    cols = min(3, len(todo))
    rows = -(-(len(todo) + len(crowded)) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    spare = list(axes.flat[len(todo):])              # empty panels, to hold a crowded panel's legend
    for ax in spare:
        ax.axis('off')
    colors = plt.get_cmap('tab10').colors + plt.get_cmap('Dark2').colors    # a colour per series
    for ax, (sweep, title, lines, paper) in zip(axes.flat, todo):
        unit = UNITS.get(sweep, 'test accuracy %')
        if SWEEPS[sweep][0] == 'seed':               # a row per series: the mean, and the seeds' spread
            names = list(lines)
            stats = [mean_sd([x for xs in lines[n].values() for x in xs]) for n in names]
            ax.errorbar([m for m, _ in stats], range(len(names)), xerr=[sd for _, sd in stats], fmt='o', capsize=4)
            ax.set_yticks(range(len(names)), names, fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel(unit)
            ax.set_title(f'{sweep}: mean ± sd over seeds')
            continue
        ax.set_ylabel(unit)
        color = {}
        for name, runs in lines.items():
            base = name.removesuffix(', at init')
            color.setdefault(base, colors[len(color) % len(colors)])
            xs = sorted(runs)
            style = dict(color=color[base], marker='o^vDs<>p'[list(color).index(base) % 8])
            ax.plot(xs, [sum(runs[x]) / len(runs[x]) for x in xs], ':' if base != name else '-', label=name, **style)
            seeds = [(x, y) for x in xs if len(runs[x]) > 1 for y in runs[x]]
            if seeds:
                ax.plot(*zip(*seeds), linestyle='none', markerfacecolor='none', alpha=0.7, **style)
        for i, (name, values) in enumerate(paper.items()):
            base = name.removesuffix(', paper')
            ax.plot(sorted(values), [values[x] for x in sorted(values)], 's--', alpha=0.5, label=name,
                    color=color.get(base, colors[(len(color) + i) % len(colors)]))
        ax.set_xscale('log', base=2)
        if sweep.startswith('covariance'):           # the paper's and the sink-free MixiT's values lie near 0.1
            ax.set_yscale('log', nonpositive='mask')  # a covariance at or below 0 leaves a gap in its line
        ax.set_xlabel(SWEEPS[sweep][0])
        ax.set_title(title)
        handles, labels = ax.get_legend_handles_labels()
        if title in crowded:
            ncol = 2 if max(map(len, labels)) < 30 else 1   # long names one to a row, inside the panel's width
            spare.pop(0).legend(handles, labels, title=title, fontsize=7, ncol=ncol, loc='center')
        else:
            ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
    fig.savefig(out, dpi=120, bbox_inches='tight')   # a legend panel's long names may reach past the grid
    print(f"wrote {out}")
    return 0


if __name__ == '__main__':
    sys.exit(run_command(dict(list=list_runs, run=run, table=table, plot=plot), doc=__doc__))
