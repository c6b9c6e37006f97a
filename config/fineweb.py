# Fineweb-edu language modeling (paper 1, Tables 2 and 9: log perplexity). The task's settings, which the files of
# its four variants include:
# python tasks.py prepare fineweb_edu            (once: HuggingFaceFW/fineweb-edu, sample-10BT, rows [0, 2^20) train,
#                                                 [2^20, 2^20 + 2^12) test -> data/fineweb_edu, ~2 GB of tokens)
# torchrun --standalone --nproc_per_node=8 train.py config/fineweb_<variant>.py
# 512 sequences/iter = 16 micro-batch x 4 accum x 8 GPUs (1 GPU: the same batch, 32x the accumulation)
# 512 x 2048 block = 1,048,576 tokens/iter x 40,000 iters = 42B tokens
# Hyperparameters: paper 1 Table 8 (the best found for MixiT, used for every variant here).
# Table 7 grid searched per architecture: layers [8, 12], width [512, 1024], heads [4, 8, 16],
# lr [1e-3, 5e-4, 1e-4], batch [256, 512, 1024].
# Steps: 40,000 (paper 1, App. C). Warmup: not given by the paper; 1,000 here. Evaluation in micro-batches of 16
# windows, the training shape, so that the compiled graph is the same (16 x 2048 rows of 50,304 logits at a time).

task = 'lm'
lm_data_dir = 'data/fineweb_edu'
block_size = 2048
vocab_multiple = 64              # the output layer's 50,257 rows padded to 50,304 (nanoGPT's) for aligned matmuls
n_layer = 12
n_embd = 512
n_head = 8
learning_rate = 5e-4
batch_size = 512
micro_batch_size = 16
eval_batch_size = 16
max_iters = 40000
warmup_iters = 1000
eval_interval = 1000
