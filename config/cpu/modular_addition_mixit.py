# Modular addition (paper 1, Table 3 shape) at CPU scale, variant mixit, in the authors' code's setting:
# p = 199, every pair, split 95/5 (37,621 train / 1,980 test). p = 599 with 40,000 pairs needs grokking-length runs.
# python train.py config/cpu/modular_addition_mixit.py
# 256 sequences/iter x 3 tokens, one process (torchrun splits the same batch).

task = 'modular_addition'
modular_addition_p = 199
modular_addition_all_pairs = True
variant = 'mixit'
n_layer = 2
n_embd = 128
n_head = 32        # Table 8's heads of width 4, with its learning rate (docs/paper1.md#modular-addition)
learning_rate = 1e-3
weight_decay = 0.1
batch_size = 256
max_iters = 10000
warmup_iters = 100
eval_interval = 1000
log_interval = 100
dtype = 'float32'
compile = False
out_dir = 'out/cpu/modular_addition_mixit'
