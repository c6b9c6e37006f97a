# Memorization of 512^2 random key-value pairs with paper 1's Table 8 hyperparameters (the best found for
# MixiT: 2 layers, width 1024, 4 heads, lr 1e-3, batch 256). The task's settings, which the files of its four
# variants include:
# torchrun --standalone --nproc_per_node=8 train.py config/memorization_table8_<variant>.py
# 256 sequences/iter = 32 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation);
# 10,000 steps (paper 1, App. C) = 2.56M sequences, about 10 passes over the 262,144 keys.
# Weight decay 1e-4 and a cosine schedule after 500 warm-up steps as the authors' memorization script (here to 0);
# biases on and MixiT's position embedding of length 3 as in Table 4 (docs/deviations.md#memorization-training).
# Table 7 grid searched per architecture: layers [2, 4, 8], width [512, 1024], heads [4, 8, 16, 64],
# lr [1e-3, 5e-4, 1e-4], batch [256, 512, 1024].

task = 'memorization'
n_layer = 2
n_embd = 1024
n_head = 4
bias = True
block_size = 3
learning_rate = 1e-3
weight_decay = 1e-4
min_lr_ratio = 0.0
batch_size = 256
micro_batch_size = 32
max_iters = 10000
warmup_iters = 500
eval_interval = 500
