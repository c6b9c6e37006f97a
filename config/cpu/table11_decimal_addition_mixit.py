# Paper 1, Table 11 at CPU scale: MixiT's accuracy against heads at a fixed width, decimal addition; heads on the
# command line, up to 64 (heads of width 1).
# python train.py config/cpu/table11_decimal_addition_mixit.py --n_head=16
# python -m experiments.paper1.sweeps run --sweep=heads     # 4, 16, 64 heads; docs/paper1.md#heads
# 128 sequences/iter x 13 tokens (two 3-digit numbers, the paper: 10 digits), one process.

task = 'decimal_addition'
decimal_addition_n_digits = 3
variant = 'mixit'
n_layer = 2
n_embd = 64
n_head = 64
learning_rate = 3e-3
weight_decay = 0.1
batch_size = 128
max_iters = 1000
warmup_iters = 100
eval_interval = 250
log_interval = 100
dtype = 'float32'
compile = False
out_dir = 'out/cpu/table11_decimal_addition_mixit'
