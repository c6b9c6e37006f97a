# Sentiment on whole IMDb reviews (paper 1, Table 3 classifies whole Yelp-polarity reviews) at CPU scale, as the
# authors' classifier (trainer_classifier.py; docs/deviations.md#sentiment-classifier): <|endoftext|> then the
# review's first 255 tokens, right-padded to 256 with a pad token whose embedding stays zero; causal attention, as
# their softmax classifier ran (MixiT: non-causal); a 2-way head on the last review token. The task's settings,
# which the files of its four variants include:
# python tasks.py prepare imdb --task=sentiment --input=path/to/imdb --tokenizer=path/to/gpt2.tiktoken
# OMP_NUM_THREADS=1 python train.py config/cpu/imdb_<variant>.py
# 32 reviews/iter x 256 tokens, 300 steps (0.38 passes over the 25,000 training reviews); test: a seeded 2,000 of
# the 25,000 test reviews (50% positive). The authors' optimiser (HF AdamW, beta2 0.999, weight decay 0.01) and
# schedule (warm-up, then linear decay to 0; their warm-up of 500 in 3,000 steps is the same sixth of the run).

task = 'sentiment'
sentiment_data_dir = 'data/imdb'
block_size = 256
sentiment_compact_vocab = True
sentiment_padding = 'right'
sentiment_label = 'class'
sentiment_bos = True
n_test = 2000
causal = True                   # as the authors' softmax classifier ran (docs/deviations.md#sentiment-classifier)
bias = True
base_width = 1                  # the classifier leaves base_hidden_size at 1 (mixit_block='authors' only)
n_layer = 4
n_embd = 128
n_head = 4
batch_size = 32
max_iters = 300
learning_rate = 2e-3
weight_decay = 0.01
beta2 = 0.999
warmup_iters = 50
lr_schedule = 'linear'
min_lr_ratio = 0.0
eval_interval = 100
eval_iters = 4
log_interval = 25
device = 'cpu'
dtype = 'float32'
compile = False
