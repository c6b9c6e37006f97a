# Dyck-1 (paper 1, Table 3 shape) at CPU scale, variant mixit: a few minutes on 2 idle CPU cores.
# python train.py config/cpu/dyck1_mixit.py
# 64 sequences/iter x 40 tokens = 2,560 tokens/iter, one process (torchrun splits the same batch).

task = 'dyck1'
dyck1_min_len = 40
dyck1_max_len = 40
variant = 'mixit'
n_layer = 2
n_embd = 128
n_head = 128       # MixiT needs many heads to span a uniform prefix average (paper 1, Table 11): 64 heads
                   # reached 84.0% at 1,500 steps, 128 heads of width 1 93.3% at 3,000 (83.2% at 1,500); the
                   # other variants use 8 heads of width 8 (each architecture tuned separately, as paper 1 does)
learning_rate = 3e-3
weight_decay = 0.1
batch_size = 64
max_iters = 3000
warmup_iters = 100
eval_interval = 500
log_interval = 100
dtype = 'float32'     # at this size bf16 autocast on CPU is no faster than fp32
compile = False
out_dir = 'out/cpu/dyck1_mixit'
