# Paper 2 §5 3-hop induction heads, CPU size: the 2-hop model of universal_khop2.py (UTF with H=2, L=3, d=4,
# d_in=30 -> m = m̄ = 352; strings of 32 characters, 32 batch x 33 tokens, 10,000 iters) on 3 hops (paper: L=4,
# d=30, m=2280; 128 x 99, 60,000 iters). Only E and U are trained unless --freeze_attn=False etc.:
# CPU size uses L=3, not the paper's 4: with d_in = 30, L=4 needs m̄ = 480 + 60d (720 at d=4, 5-7x the CPU time).
#   python -m experiments.paper2 run --which=table1 --size=cpu

include('universal_khop2.py')
khop_k = 3
out_dir = 'out/cpu/universal_khop3'
