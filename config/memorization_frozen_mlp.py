# memorization of 512^2 random key-value pairs (paper 1, Table 4), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/memorization_frozen_mlp.py
# 256 sequences/iter = 32 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# Paper 1 Table 4: n = 128, L = 2, 4 heads, biases on, 10,000 steps at lr 0.005, scored on the training set.
# Table 7 grid searched per architecture: layers [2, 4, 8], width [512, 1024], heads [4, 8, 16, 64], lr [1e-3, 5e-4, 1e-4], batch [256, 512, 1024].
# Steps: 10,000 (paper 1, App. C).

task = 'memorization'
variant = 'frozen_mlp'
n_layer = 2
n_embd = 128
n_head = 4
bias = True
block_size = 3                # MixiT's position embedding of length 3, as Table 4 counts it
learning_rate = 0.005
batch_size = 256
micro_batch_size = 32
max_iters = 10000
warmup_iters = 200
eval_interval = 500
out_dir = 'out/memorization_frozen_mlp'
