# Paper 1, Table 5: MixiT against the random transformer (only the token embedding and head trained; rotary
# positions, as the authors' depth script) by depth, decimal addition of two 10-digit numbers: the settings of
# both, which table5_mixit.py and table5_random.py include; depth on the command line (the paper: 2, 8, 16).
# torchrun --standalone --nproc_per_node=8 train.py config/table5_<variant>.py --n_layer=16
# --depth_alpha=1: the depth-scaled block (depth.py's depth_alpha, which the authors' depth runner leaves at 0)
# 1,000 sequences/iter = 125 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation).
# Settings of the authors' depth script (scripts/depth.sh, depth.py, task_additionstream.py): width 512,
# 128 heads, biases, batch 1,000, lr 1e-2 with 500 warm-up steps and a cosine decay to 0, weight decay 1e-3, HF
# AdamW's beta2 0.999; its train_steps=500 counts passes over 80,000 examples, 40,000 steps at batch 1,000.
# CPU size: config/cpu/table5.py.

task = 'decimal_addition'
decimal_addition_n_digits = 10
n_layer = 8
n_embd = 512
n_head = 128
bias = True
learning_rate = 1e-2
weight_decay = 1e-3
beta2 = 0.999
batch_size = 1000
micro_batch_size = 125
max_iters = 40000
warmup_iters = 500
min_lr_ratio = 0.0
eval_interval = 1000
