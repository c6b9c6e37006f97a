# Modular addition (paper 1, Table 3 shape) at CPU scale, in the authors' code's setting: p = 199, every pair,
# split 95/5 (37,621 train / 1,980 test). p = 599 with 40,000 pairs needs grokking-length runs. The task's
# settings, which the files of its four variants include:
# python train.py config/cpu/modular_addition_<variant>.py
# 256 sequences/iter x 3 tokens, one process (torchrun splits the same batch).

task = 'modular_addition'
modular_addition_p = 199
modular_addition_all_pairs = True
n_layer = 2
n_embd = 128
n_head = 8
learning_rate = 3e-3
weight_decay = 0.1
batch_size = 256
max_iters = 20000
warmup_iters = 100
eval_interval = 2000
log_interval = 100
dtype = 'float32'
compile = False
