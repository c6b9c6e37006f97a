# Memorization (paper 1, Table 4) at CPU scale: 64^2 = 4,096 random key -> value pairs (the paper: 512^2) at
# width 16 (the paper: 128), a size at which the standard model just stores them all.
# Trained as the authors' memorization script: AdamW with weight decay 1e-4, cosine schedule after 500
# warm-up steps, a large batch (here 4,096 sequences per step, as many as there are keys, drawn with
# replacement); learning rate 0.005 (paper 1, App. C). Scored on the training set; log.jsonl has val_bits_per_param.
# The task's settings, which the files of its four variants include:
# python train.py config/cpu/memorization_<variant>.py
# 4,096 sequences/iter x 2 tokens, one process (torchrun splits the same batch). Result: docs/paper1.md#memorization.

task = 'memorization'
n_layer = 2
n_embd = 16
n_head = 4
bias = True
learning_rate = 0.005
weight_decay = 1e-4
min_lr_ratio = 0.0
batch_size = 4096
max_iters = 1500
warmup_iters = 500
eval_interval = 500
log_interval = 100
dtype = 'float32'
compile = False
