# Paper 1, Table 5 at CPU scale: MixiT against the random transformer (Zhong & Andreas 2024: only embeddings,
# positions and head trained) by depth, on decimal addition; variant mixit. Both as the authors' depth script:
# the same width and heads for both (heads of width 1), trained from scratch, depth set on the command line.
# python train.py config/cpu/table5_mixit.py --n_layer=8
# python results/paper1/sweeps.py run --sweep=depth     # depths 2, 4, 8, 16 of both; docs/paper1.md#depth
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
out_dir = 'out/cpu/table5_mixit'
