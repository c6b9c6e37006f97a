# Paper 1, Table 11: MixiT's Dyck-1 accuracy against heads (4, 16, 64, 256) at width 512; the heads on the
# command line, everything else as config/dyck1_mixit.py (Table 8: 4 layers, lr 1e-3, batch 512).
# torchrun --standalone --nproc_per_node=8 train.py config/table11_dyck1_mixit.py --n_head=64
# 512 sequences/iter = 64 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation).
# Steps: not given by the paper; 20,000 here. CPU size: experiments/paper1/sweeps.py's heads sweep.

task = 'dyck1'
dyck1_max_len = 40
dyck1_batched = True             # a batch's strings drawn together: the same distribution, several times faster
train_on_test = True   # the authors' stream: short strings are in the test set and in training
variant = 'mixit'
n_layer = 4
n_embd = 512
n_head = 256
learning_rate = 0.001
batch_size = 512
micro_batch_size = 64
max_iters = 20000
warmup_iters = 400
eval_interval = 1000
out_dir = 'out/table11_dyck1_mixit'
