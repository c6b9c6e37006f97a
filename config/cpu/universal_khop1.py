# Paper 2 §5 1-hop induction heads, CPU size: UTF with H=2, L=2, d=4, d_in=30 -> m = M = 168 (the routed sparse
# construction is 210 wide: python universal.py dims --H=2 --L=2 --d=4 --d_in=30)
# (paper: L=2, d=28, m=456). Only E and U are trained unless --freeze_attn=False etc.:
#   python -m experiments.paper2 run --which=table1 --size=cpu
# 16 batch x 99 tokens = 1,584 tokens/iter, 3,000 iters (paper: 128 x 99, 10,000 iters)
include('universal_khop.py')
out_dir = 'out/cpu/universal_khop1'
khop_k = 1
n_layer = 2
n_embd = 168
batch_size = 16
max_iters = 3000
