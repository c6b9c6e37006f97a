# Yelp polarity sentiment classification (paper 1, Tables 3 and 10: test accuracy), variant frozen_qk.
# python tasks.py prepare yelp                   (once: fancyzhx/yelp_polarity, 560,000 train / 38,000 test -> data/yelp)
# torchrun --standalone --nproc_per_node=8 train.py config/yelp_frozen_qk.py
# 256 sequences/iter = 32 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# reviews truncated to 256 tokens and padded on the left (the authors' classifier): the label is the target at
# the last position
# Hyperparameters: paper 1 Table 8 (the best found for MixiT, used for every variant here).
# Table 7 grid searched per architecture: layers [4, 8], width [512, 1024], heads [4, 8, 16, 64], lr [1e-3, 5e-4, 1e-4], batch [256, 512, 1024].
# Steps: not given by the paper; 10,000 here (~4.6 passes over the training reviews). Warmup: 200.

task = 'sentiment'
sentiment_data_dir = 'data/yelp'
sentiment_block_size = 256
variant = 'frozen_qk'
n_layer = 4
n_embd = 1024
n_head = 16
learning_rate = 5e-4
batch_size = 256
micro_batch_size = 32
max_iters = 10000
warmup_iters = 200
eval_interval = 1000
out_dir = 'out/yelp_frozen_qk'
