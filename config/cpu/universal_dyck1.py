# Paper 2 §5 parenthesis balancing, CPU size: UTF with H=2, L=2, d=8, d_in=4 -> m = m̄ = 112 (paper: H=4, d=24,
# m=1024). Only E and U are trained unless --freeze_attn=False etc.; universal.py runs the variants:
#   python -m experiments.paper2 run --which=table1 --size=cpu
#   python train.py config/cpu/universal_dyck1.py --residual=True --norm=layer        (random, + residual and LN)
# The authors' format (paper 2, App. G.1): a string of at most 60 characters, then ?; the answer is the target at ?.
# 64 batch x 61 tokens = 3,904 tokens/iter, 2,000 iters (paper: 1000 x 61, 10,000 iters)
include('universal.py')
out_dir = 'out/cpu/universal_dyck1'
task = 'dyck1'
dyck1_format = 'query'
dyck1_max_len = 60               # paper 2 §5.1: "the maximum length for the input parentheses sequences is 60"
n_test = 1000
n_layer = 2
n_head = 2
head_dim = 8
n_embd = 112
batch_size = 64
max_iters = 2000
