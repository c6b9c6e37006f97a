# Paper 1, Table 5 at CPU scale: MixiT against the random transformer (Zhong & Andreas 2024: only the token
# embedding and head trained; the authors' depth script gives it rotary positions, not a learned position
# embedding) by depth, on decimal addition: the settings of both, which table5_mixit.py and table5_random.py
# include. Both set up as the authors' depth script (depth.py, task_additionstream.py): heads of width 4 (their
# 512 x 128), biases, lr 1e-2, weight decay 1e-3, AdamW beta2 0.999, warm-up then a cosine decay to 0; trained
# from scratch, depth on the command line.
# python train.py config/cpu/table5_<variant>.py --n_layer=8
# --depth_alpha=1: the depth-scaled block (depth.py's depth_alpha, which the authors' depth runner leaves at 0)
# python -m experiments.paper1.sweeps run --sweep=depth     # depths 2, 4, 8 of both, 3 seeds; docs/paper1.md#depth
# 128 sequences/iter x 13 tokens (two 3-digit numbers, the paper: 10 digits), one process.

task = 'decimal_addition'
decimal_addition_n_digits = 3
n_layer = 2
n_embd = 128
n_head = 32
bias = True
learning_rate = 1e-2
weight_decay = 1e-3
beta2 = 0.999
batch_size = 128
max_iters = 1500
warmup_iters = 50
min_lr_ratio = 0.0
eval_interval = 500
log_interval = 100
dtype = 'float32'
compile = False
