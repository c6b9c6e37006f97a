# Yelp sentiment at CPU size (paper 1 Table 3 classifies whole Yelp-polarity reviews; full size:
# config/yelp_<variant>.py). Here: Yelp sentences (Shen et al. 2017), dev split (63,483) for training, a seeded
# random 4,000 of the test split (126,670) for test. The task's settings, which the files of its four variants
# include. Data, offline, once:
#   python tasks.py prepare yelp_sentences --task=sentiment --input=path/to/yelp-sentiment-sentences \
#       --tokenizer=path/to/gpt2.tiktoken
# OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_<variant>.py
# Set up as the authors' classifier (as config/cpu/imdb.py; docs/deviations.md#sentiment-classifier):
# <|endoftext|>, the sentence, pads to 64 (no sentence is longer than 26 tokens), causal (MixiT: non-causal),
# a 2-way head. 64 sentences/iter x 200 iters (0.2 passes); compact_vocab: the 10,713 ids that occur.

task = 'sentiment'
sentiment_data_dir = 'data/yelp_sentences'
block_size = 64
sentiment_compact_vocab = True
sentiment_padding = 'right'
sentiment_label = 'class'
sentiment_bos = True
n_test = 4000
causal = True                   # as the authors' softmax classifier ran (docs/deviations.md#sentiment-classifier)
bias = True
base_width = 1                  # the classifier leaves base_hidden_size at 1 (mixit_block='authors' only)
n_layer = 4
n_embd = 128
n_head = 4
batch_size = 64
max_iters = 200
learning_rate = 2e-3
weight_decay = 0.01
beta2 = 0.999
warmup_iters = 33
lr_schedule = 'linear'
min_lr_ratio = 0.0
eval_interval = 100
eval_iters = 4
log_interval = 10
device = 'cpu'
dtype = 'float32'
compile = False
