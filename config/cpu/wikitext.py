# WikiText-2 language modeling at CPU size (paper 1 Table 2; full size: config/wikitext_<variant>.py). The task's
# settings, which the files of its four variants include.
# Data, offline, once (training text: WikiText-2 validation, 258,660 GPT-2 tokens; test: WikiText-2 test, 295,878):
#   python tasks.py prepare wikitext2 --input=path/to/wikitext-2/wiki.valid.tokens \
#       --test_input=path/to/wikitext-2/wiki.test.tokens --tokenizer=path/to/gpt2.tiktoken
# OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_<variant>.py
# 32 batch x 128 block = 4,096 tokens/iter x 150 iters = 614,400 tokens (2.4 passes over the training text);
# ~6 min of one core. compact_vocab: the 18,012 GPT-2 ids that occur, relabelled, so the output layer is 18,012-way.
# Evaluation during training: the first 600 test windows (76,800 tokens, to save CPU); the whole test split
# (295,877 predicted tokens, ~70 s of one core) for the final checkpoint, in a copy of the run:
#   mkdir -p out/cpu/wikitext_<variant>_test
#   cp out/cpu/wikitext_<variant>/ckpt.pt out/cpu/wikitext_<variant>_test/
#   python train.py config/cpu/wikitext_<variant>.py --n_test=0 --init_from=resume \
#       --out_dir=out/cpu/wikitext_<variant>_test

task = 'lm'
lm_data_dir = 'data/wikitext2'
block_size = 128
lm_compact_vocab = True
n_test = 600
n_layer = 4
n_embd = 128
n_head = 4
batch_size = 32
max_iters = 150
learning_rate = 2e-3
warmup_iters = 20
eval_interval = 50
eval_iters = 4
log_interval = 10
device = 'cpu'
dtype = 'bfloat16'
compile = False
