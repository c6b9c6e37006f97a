# Retrieval / needle in a haystack (paper 1, Table 1 shape) at CPU scale, variant standard.
# python train.py config/cpu/retrieval_standard.py
# 128 sequences/iter x 17 tokens, one process (torchrun splits the same batch).
# A small vocabulary (8 keys, 7 values) and a high learning rate were the best of the settings tried on a
# loaded 2-core CPU, but none passed the "copy some value from the context" plateau (~45-50% here) within
# 3,000 steps; see the README's results section.

task = 'retrieval'
retrieval_vocab_size = 16
retrieval_m_max = 8
variant = 'standard'
n_layer = 2
n_embd = 64
n_head = 4
learning_rate = 1e-2
weight_decay = 0.1
beta2 = 0.99
batch_size = 128
max_iters = 10000
warmup_iters = 100
eval_interval = 500
log_interval = 100
dtype = 'float32'
compile = False
out_dir = 'out/cpu/retrieval_standard'
