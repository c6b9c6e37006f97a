# Retrieval / needle in a haystack (paper 1, Table 1 shape) at CPU scale. The task's settings, which the files of
# its four variants include:
# python train.py config/cpu/retrieval_<variant>.py
# 128 sequences/iter x 17 tokens, one process (torchrun splits the same batch).
# What got past the "copy some value from the context" plateau on a 2-core CPU: width 128 with lr 1e-3
# (standard: 99.4% at step 500). Width 64 (lr 1e-3 to 1e-2, batch 64-256, 4-8 heads, V = 16 or 64) sat at
# 38-51% for thousands of steps; see docs/paper1.md. Result: docs/paper1.md#retrieval.

task = 'retrieval'
retrieval_vocab_size = 64
retrieval_m_max = 8
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
