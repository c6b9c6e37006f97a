# Sentiment on whole IMDb reviews (paper 1, Table 3 classifies whole Yelp-polarity reviews) at CPU scale,
# variant frozen_mlp: the label is the target at the last token of a review cut to 256 tokens.
# python tasks.py prepare imdb --task=sentiment --input=path/to/imdb --tokenizer=path/to/gpt2.tiktoken
# OMP_NUM_THREADS=1 python train.py config/cpu/imdb_frozen_mlp.py
# 32 reviews/iter x 256 tokens, 300 steps (0.38 passes over the 25,000 training reviews); test: a seeded 2,000 of
# the 25,000 test reviews (50% positive). About 1 s per step and 7 minutes per run on one CPU core (the output
# layer runs only at each review's labelled position; docs/paper1.md#language-modeling-and-sentiment).

task = 'sentiment'
sentiment_data_dir = 'data/imdb'
sentiment_block_size = 256
sentiment_compact_vocab = True
sentiment_padding = 'right'     # texts from position 0: test batches crop their trailing pads
n_test = 2000
variant = 'frozen_mlp'
n_layer = 4
n_embd = 128
n_head = 4
batch_size = 32
max_iters = 300
learning_rate = 2e-3
warmup_iters = 30
eval_interval = 100
eval_iters = 4
log_interval = 25
device = 'cpu'
dtype = 'bfloat16'
compile = False
out_dir = 'out/cpu/imdb_frozen_mlp'
