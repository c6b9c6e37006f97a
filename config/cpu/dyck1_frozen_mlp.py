# Dyck-1 (paper 1, Table 3 shape) at CPU scale, variant frozen_mlp: a few minutes on 2 idle CPU cores.
# python train.py config/cpu/dyck1_frozen_mlp.py
# 64 sequences/iter x 40 tokens = 2,560 tokens/iter, one process (torchrun splits the same batch).

task = 'dyck1'
dyck1_min_len = 40
dyck1_max_len = 40
variant = 'frozen_mlp'
n_layer = 2
n_embd = 64
n_head = 8
learning_rate = 3e-3
weight_decay = 0.1
batch_size = 64
max_iters = 1500
warmup_iters = 100
eval_interval = 500
log_interval = 100
dtype = 'float32'     # at this size bf16 autocast on CPU is no faster than fp32
compile = False
out_dir = 'out/cpu/dyck1_frozen_mlp'
