# Dyck-1 (paper 1, Table 3) at CPU scale in the authors' format. The task's settings, which the files of its four
# variants include:
# python train.py config/cpu/dyck1_<variant>.py
# 64 sequences/iter x 41 tokens (a string of at most 40 characters, then ?; the answer is scored at ? only),
# one process (torchrun splits the same batch). Result and the counting baseline: docs/paper1.md#dyck-1.

task = 'dyck1'
dyck1_format = 'query'
dyck1_max_len = 40
train_on_test = True   # every string trained on, short ones in the test set too (the authors' depth.py drops
                       # test strings: --train_on_test=False; docs/deviations.md#dyck-1-format)
n_layer = 2
n_embd = 64
n_head = 8
learning_rate = 3e-3
weight_decay = 0.1
batch_size = 64
max_iters = 1500
warmup_iters = 100
eval_interval = 500
log_interval = 100
dtype = 'float32'     # at this size bf16 autocast on CPU is no faster than fp32
compile = False
