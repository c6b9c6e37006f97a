# k-hop induction heads (paper 1, Table 1) at CPU scale: k ~ U{0..2} (the paper: U{0..16}), strings of 32
# characters (the paper: 98), 3 layers of width 64 (the paper: 5 x 512). The task's settings, which the files of
# its four variants include:
# python train.py config/cpu/khop_<variant>.py
# 64 sequences/iter x 33 tokens, one process (torchrun splits the same batch). Accuracy per k beside the
# "copy the current character" rate: python -m experiments.paper1.breakdown out/cpu/khop_<variant>/ckpt.pt

task = 'khop'
khop_k = -1
khop_max_k = 2
khop_length = 32
n_test = 300                # test sequences (the paper: 100), about 100 per k
n_layer = 3
n_embd = 64
n_head = 4
learning_rate = 2e-3
weight_decay = 0.1
beta2 = 0.99
batch_size = 64
max_iters = 1500
warmup_iters = 100
eval_interval = 500
log_interval = 100
dtype = 'float32'
compile = False
