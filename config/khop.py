# k-hop induction heads, k ~ U{0..16} (paper 1, Table 1). The task's settings, which the files of its four variants
# include:
# torchrun --standalone --nproc_per_node=8 train.py config/khop_<variant>.py
# 128 sequences/iter = 16 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# Hyperparameters: paper 1 Table 8 (the best found for MixiT, used for every variant here).
# Table 7 grid searched per architecture: layers [5], width [256, 512, 1024], heads [8],
# lr [1e-4, 5e-4], batch [128, 256].
# Steps: 5,000 (paper 1, App. C).

task = 'khop'
khop_k = -1                 # k ~ U{0..16}
khop_max_k = 16
n_layer = 5
n_embd = 512
n_head = 8
learning_rate = 0.0001
batch_size = 128
micro_batch_size = 16
max_iters = 5000
warmup_iters = 100
eval_interval = 250
