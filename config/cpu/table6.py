# Paper 1, Table 6 at CPU scale: language models of growing depth on WikiText-2 whose last-layer token
# covariance is then measured (sde.py covariance): the settings of both variants, which table6_mixit.py and
# table6_random.py include; depth set on the command line.
# python train.py config/cpu/table6_<variant>.py --n_layer=8
# python sde.py covariance out/cpu/table6_<variant>/ckpt.pt
# python -m experiments.paper1.sweeps run --sweep=covariance   # depths 2, 4, 8, 16 of random and MixiT
# 16 windows of 128 tokens per iter (WikiText-2 validation, the test split held out), 100 steps.

task = 'lm'
lm_data_dir = 'data/wikitext2'
block_size = 128
lm_compact_vocab = True
n_test = 64
n_layer = 2
n_embd = 128
n_head = 4
batch_size = 16
max_iters = 100
learning_rate = 2e-3
warmup_iters = 10
eval_interval = 100
eval_iters = 4
log_interval = 25
dtype = 'float32'
compile = False
