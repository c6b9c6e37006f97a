# Decimal addition of two 10-digit numbers (paper 1, Table 3). The task's settings, which the files of its four
# variants include:
# torchrun --standalone --nproc_per_node=8 train.py config/decimal_addition_<variant>.py
# 128 sequences/iter = 16 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# Hyperparameters: paper 1 Table 8 (the best found for MixiT, used for every variant here).
# Table 7 grid searched per architecture: layers [2, 4, 8], width [512, 1024], heads [4, 8, 16, 64],
# lr [1e-3, 5e-4, 1e-4], batch [128, 256, 512].
# Steps: not given by the paper; 20,000 here.

task = 'decimal_addition'
n_layer = 8
n_embd = 512
n_head = 64
learning_rate = 0.001
batch_size = 128
micro_batch_size = 16
max_iters = 20000
warmup_iters = 400
eval_interval = 1000
