# Yelp polarity sentiment classification (paper 1, Tables 3 and 10: test accuracy), as the authors' README command
# (trainer_classifier.py --task yelp_polarity --max_seq_len 256 --max_steps=3000 --n_embd=1024 --n_head=16
# --learning_rate=5e-4, its defaults otherwise; docs/deviations.md#sentiment-classifier). The task's settings,
# which the files of its four variants include:
# python tasks.py prepare yelp               (once: fancyzhx/yelp_polarity, 560,000 train / 38,000 test -> data/yelp)
# python train.py config/yelp_<variant>.py    (IMDb instead: --sentiment_data_dir=data/imdb)
# <|endoftext|> then a review's first 255 tokens, right-padded to 256 with a pad whose embedding stays zero;
# causal attention, as their softmax classifier ran (MixiT: non-causal); a 2-way head on the last review token.
# 32 reviews/iter (their per-device batch in one process), 3,000 steps; HF AdamW (beta2 0.999, weight decay 0.01),
# warm-up max(0.04 x steps, 500) = 500, then linear decay to 0; fp32. Paper 1's Table 8 gives batch 256.

task = 'sentiment'
sentiment_data_dir = 'data/yelp'
block_size = 256
sentiment_padding = 'right'
sentiment_label = 'class'
sentiment_bos = True
causal = True                   # as the authors' softmax classifier ran (docs/deviations.md#sentiment-classifier)
bias = True
base_width = 1                  # the classifier leaves base_hidden_size at 1 (mixit_block='authors' only)
n_layer = 4
n_embd = 1024
n_head = 16
batch_size = 32
max_iters = 3000
learning_rate = 5e-4
weight_decay = 0.01
beta2 = 0.999
warmup_iters = 500
lr_schedule = 'linear'
min_lr_ratio = 0.0
eval_interval = 500
dtype = 'float32'
