# Decimal addition (paper 1, Table 3) at CPU scale: two 5-digit numbers (the paper: 10 digits), least-significant
# digit first, the 6 digits of the sum scored (docs/deviations.md#decimal-addition-format). The task's settings,
# which the files of its four variants include:
# python train.py config/cpu/decimal_addition_<variant>.py
# 128 sequences/iter x 17 tokens, one process (torchrun splits the same batch). Metrics: val_acc (per digit),
# val_exact (whole sum). Result: docs/paper1.md#decimal-addition.

task = 'decimal_addition'
decimal_addition_n_digits = 5
n_layer = 2
n_embd = 128
n_head = 8
learning_rate = 3e-3
weight_decay = 0.1
batch_size = 128
max_iters = 1000
warmup_iters = 100
eval_interval = 250
log_interval = 100
dtype = 'float32'
compile = False
