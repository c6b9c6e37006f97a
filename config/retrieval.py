# Retrieval / needle in a haystack, V = 256, m_max = 30 (paper 1, Table 1, Fig. 2). The task's settings, which the
# files of its four variants include:
# torchrun --standalone --nproc_per_node=8 train.py config/retrieval_<variant>.py
# 1024 sequences/iter = 64 micro-batch x 2 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# Hyperparameters: paper 1 Table 8 (the best found for MixiT, used for every variant here).
# Table 7 grid searched per architecture: layers [2, 4, 8], width [512, 1024], heads [4, 8, 16, 64],
# lr [1e-3, 5e-4, 1e-4], batch [256, 512, 1024].
# Steps: not given by the paper; 20,000 here.

task = 'retrieval'
retrieval_vocab_size = 256
retrieval_m_max = 30
n_layer = 2
n_embd = 1024
n_head = 4
learning_rate = 0.0001
batch_size = 1024
micro_batch_size = 64
max_iters = 20000
warmup_iters = 400
eval_interval = 1000
