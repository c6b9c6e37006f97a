# Paper 2 §5 parenthesis balancing, full size (Table 5): UTF with H=4, L=2, d=24, d_in=4 -> m = m̄ = 1024.
# Only E and U are trained unless --freeze_attn=False etc.; universal.py runs sparse / random / full and the
# architecture ablations through this file:
#   python -m experiments.paper2 run --which=table1 --size=paper --seeds=0,1,2,3,4
#   python train.py config/universal_dyck1.py --construction=sparse
# The authors' format (App. G.1): a string of at most 60 characters, then ?; the answer is the target at ?.
# 1000 batch x 61 tokens = 61,000 tokens/iter, 10,000 iters
include('universal.py')
out_dir = 'out/universal_dyck1'
task = 'dyck1'
dyck1_format = 'query'
dyck1_max_len = 60               # paper 2 §5.1: "the maximum length for the input parentheses sequences is 60"
dyck1_batched = True             # a batch's strings drawn together: the same distribution, several times faster
n_layer = 2
n_head = 4
head_dim = 24
n_embd = 1024
batch_size = 1000
max_iters = 10000
learning_rate = 1e-3
warmup_iters = 50
