# Paper 2 §5 2-hop induction heads, CPU size: UTF with H=2, L=3, d=4, d_in=30 -> m = M = 352 (the routed sparse
# construction is 450 wide: python universal.py dims --H=2 --L=3 --d=4 --d_in=30)
# (paper: L=3, d=28, m=1024). Only E and U are trained unless --freeze_attn=False etc.:
#   python -m experiments.paper2 run --which=table1 --size=cpu
# Strings of 32 characters (paper: 98): at 98, 3,000 steps of 16 left every 2-hop model at the copy rate
# (results/paper2/search/). 32 batch x 33 tokens = 1,056 tokens/iter, 10,000 iters
# (paper: 128 x 99, 15,000 iters)
include('universal_khop.py')
out_dir = 'out/cpu/universal_khop2'
khop_k = 2
khop_length = 32
n_layer = 3
n_embd = 352
batch_size = 32
max_iters = 10000
