# Paper 2 §5 4-hop induction heads, full size (Table 6): the 3-hop model of universal_khop3.py (UTF with H=2, L=4,
# d=30, d_in=30 -> m = m̄ = 2280; 128 batch x 99 tokens = 12,672 tokens/iter, 60000 iters) on 4 hops.
# Only E and U are trained unless --freeze_attn=False etc.; universal.py runs sparse / random / full:
#   python -m experiments.paper2 run --which=table1 --size=paper --seeds=0,1,2,3,4
#   python train.py config/universal_khop4.py --construction=sparse

include('universal_khop3.py')
khop_k = 4
out_dir = 'out/universal_khop4'
