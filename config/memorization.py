# Memorization of 512^2 random key-value pairs (paper 1, Table 4). The task's settings, which the files of its four
# variants include:
# torchrun --standalone --nproc_per_node=8 train.py config/memorization_<variant>.py
# 32,768 sequences/iter = 4,096 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# Paper 1 Table 4: n = 128, L = 2, 4 heads, biases on, 10,000 steps at lr 0.005 (App. C), scored on the
# training set. Trained as the authors' memorization script: batch 32,768, weight decay 1e-4, cosine schedule
# after 500 warm-up steps (here to 0; docs/deviations.md#memorization-training).

task = 'memorization'
n_layer = 2
n_embd = 128
n_head = 4
bias = True
block_size = 3                # MixiT's position embedding of length 3, as Table 4 counts it
learning_rate = 0.005
weight_decay = 1e-4
min_lr_ratio = 0.0
batch_size = 32768
micro_batch_size = 4096
max_iters = 10000
warmup_iters = 500
eval_interval = 500
