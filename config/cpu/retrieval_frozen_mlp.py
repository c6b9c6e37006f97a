# Retrieval / needle in a haystack (paper 1, Table 1 shape) at CPU scale, variant frozen_mlp.
# python train.py config/cpu/retrieval_frozen_mlp.py
# 128 sequences/iter x 17 tokens, one process (torchrun splits the same batch).
# The standard config's shape and schedule (width 128, lr 1e-3: standard 99.4% at step 500), the MLPs frozen
# at init; 1,500 steps. Result: docs/paper1.md#retrieval.

task = 'retrieval'
retrieval_vocab_size = 64
retrieval_m_max = 8
variant = 'frozen_mlp'
n_layer = 2
n_embd = 128
n_head = 4
learning_rate = 1e-3
weight_decay = 0.1
beta2 = 0.99
batch_size = 128
max_iters = 1500
warmup_iters = 200
eval_interval = 500
log_interval = 100
dtype = 'float32'
compile = False
out_dir = 'out/cpu/retrieval_frozen_mlp'
