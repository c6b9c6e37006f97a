# Paper 2 §5 3-hop induction heads, full size (Table 6): UTF with H=2, L=4, d=30, d_in=30 -> m = m̄ = 2280.
# Only E and U are trained unless --freeze_attn=False etc.; universal.py runs sparse / random / full:
#   python -m experiments.paper2 run --which=table1 --size=paper --seeds=0,1,2,3,4
#   python train.py config/universal_khop3.py --construction=sparse
# 128 batch x 99 tokens = 12,672 tokens/iter, 60000 iters
include('universal_khop.py')
out_dir = 'out/universal_khop3'
khop_k = 3
n_layer = 4
head_dim = 30
n_embd = 2280
max_iters = 60000
