# Yelp sentiment at CPU size, variant frozen_qk (paper 1 Table 3 classifies whole Yelp-polarity reviews; full size:
# config/yelp_frozen_qk.py). Here: Yelp sentences (Shen et al. 2017), dev split (63,483) for training, a seeded random
# 4,000 of the test split (126,670) for test. Data, offline, once:
#   python tasks.py prepare yelp_sentences --task=sentiment --input=path/to/yelp-sentiment-sentences \
#       --tokenizer=path/to/gpt2.tiktoken
# OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_frozen_qk.py
# 64 sentences/iter x 200 iters (0.2 passes); sentences are <= 26 tokens, so block 64 truncates none and each batch
# is cropped to its longest sentence. compact_vocab: the 10,713 ids that occur. ~2 min of one core.
out_dir = 'out/cpu_yelp_sentences_frozen_qk'
task = 'sentiment'
sentiment_data_dir = 'data/yelp_sentences'
sentiment_block_size = 64
sentiment_compact_vocab = True
sentiment_padding = 'right'     # texts from position 0: test batches crop their trailing pads
n_test = 4000
variant = 'frozen_qk'
n_layer = 4
n_embd = 128
n_head = 4
batch_size = 64
max_iters = 200
learning_rate = 2e-3
warmup_iters = 20
eval_interval = 100
eval_iters = 4
log_interval = 10
device = 'cpu'
dtype = 'bfloat16'
compile = False
