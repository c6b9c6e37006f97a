# Paper 2 §5 1-hop induction heads, full size (Table 6): UTF with H=2, L=2, d=28, d_in=30 -> m = m̄ = 456.
# Only E and U are trained unless --freeze_attn=False etc.; universal.py runs sparse / random / full:
#   python -m experiments.paper2 run --which=table1 --size=paper --seeds=0,1,2,3,4
#   python train.py config/universal_khop1.py --construction=sparse
# 128 batch x 99 tokens = 12,672 tokens/iter, 10000 iters
include('universal_khop.py')
out_dir = 'out/universal_khop1'
khop_k = 1
n_layer = 2
head_dim = 28
n_embd = 456
max_iters = 10000
