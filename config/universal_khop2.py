# Paper 2 §5 2-hop induction heads, full size (Table 6): UTF with H=2, L=3, d=28, d_in=30 -> m = m̄ = 1024.
# Only E and U are trained unless --freeze_attn=False etc.; universal.py runs sparse / random / full:
#   python -m experiments.paper2 run --which=table1 --size=paper --seeds=0,1,2,3,4
#   python train.py config/universal_khop2.py --construction=sparse
# 128 batch x 99 tokens = 12,672 tokens/iter, 15000 iters
include('universal_khop.py')
out_dir = 'out/universal_khop2'
khop_k = 2
n_layer = 3
head_dim = 28
n_embd = 1024
max_iters = 15000
