# Dyck-1 balanced-parentheses classification, length 40 (paper 1, Table 3). The task's settings, which the files
# of its four variants include:
# torchrun --standalone --nproc_per_node=8 train.py config/dyck1_<variant>.py
# 512 sequences/iter = 64 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation)
# Hyperparameters: paper 1 Table 8 (the best found for MixiT, used for every variant here).
# Table 7 grid searched per architecture: layers [2, 4, 8], width [512, 1024], heads [4, 8, 16, 64],
# lr [1e-3, 5e-4, 1e-4], batch [128, 256, 512].
# Steps: not given by the paper; 20,000 here.

task = 'dyck1'
dyck1_min_len = 40
dyck1_max_len = 40
dyck1_batched = True             # a batch's strings drawn together: the same distribution, several times faster
train_on_test = True   # every string trained on, short ones in the test set too (the authors' depth.py drops
                       # test strings: --train_on_test=False; docs/deviations.md#dyck-1-format)
n_layer = 4
n_embd = 512
n_head = 64
learning_rate = 0.001
batch_size = 512
micro_batch_size = 64
max_iters = 20000
warmup_iters = 400
eval_interval = 1000
