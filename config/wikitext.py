# Wikitext-103 language modeling (paper 1, Tables 2 and 9: log perplexity). The task's settings, which the files of
# its four variants include:
# python tasks.py prepare wikitext103            (once: Salesforce/wikitext, wikitext-103-raw-v1 -> data/wikitext103)
# torchrun --standalone --nproc_per_node=8 train.py config/wikitext_<variant>.py
# 512 sequences/iter = 64 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# 512 x 256 block = 131,072 tokens/iter x 40,000 iters = 5.2B tokens (~45 passes over Wikitext-103's ~117M)
# Hyperparameters: paper 1 Table 8 (the best found for MixiT, used for every variant here).
# Table 7 grid searched per architecture: layers [8, 12], width [512, 1024], heads [4, 8, 16],
# lr [1e-3, 5e-4, 1e-4], batch [256, 512, 1024].
# Steps: 40,000 (paper 1, App. C). Warmup: not given by the paper; 1,000 here.

task = 'lm'
lm_data_dir = 'data/wikitext103'
block_size = 256
vocab_multiple = 64              # the output layer's 50,257 rows padded to 50,304 (nanoGPT's) for aligned matmuls
n_layer = 12
n_embd = 512
n_head = 8
learning_rate = 5e-4
batch_size = 512
micro_batch_size = 64
max_iters = 40000
warmup_iters = 1000
eval_interval = 1000
