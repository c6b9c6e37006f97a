# Paper 2 §5 4-hop induction heads, CPU size: UTF with H=2, L=3, d=4, d_in=30 -> m = m̄ = 352
# (paper: L=4, d=30, m=2280). Only E and U are trained unless --freeze_attn=False etc.:
# CPU size uses L=3, not the paper's 4: with d_in = 30, L=4 needs m̄ = 480 + 60d (720 at d=4, 5-7x the CPU time).
#   python universal.py experiments --which=table1 --size=cpu
# Strings of 32 characters (paper: 98): at 98, 3,000 steps of 16 left every 2-hop model at the copy rate
# (results/paper2/search/). 32 batch x 33 tokens = 1,056 tokens/iter, 10,000 iters
# (paper: 128 x 99, 60,000 iters)
out_dir = 'out/cpu/universal_khop4'
task = 'khop'
khop_k = 4
khop_length = 32
n_test = 200
variant = 'universal'
pos_emb = True                   # learned positions, trained with E and U (docs/deviations.md#k-hop-positions)
n_layer = 3
n_head = 2
head_dim = 4
n_embd = 352
batch_size = 32
max_iters = 10000
learning_rate = 1e-2
warmup_iters = 20
weight_decay = 0.01
eval_interval = 100
log_interval = 100
device = 'cpu'
dtype = 'float32'
compile = False
