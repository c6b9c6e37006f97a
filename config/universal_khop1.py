# Paper 2 §5 1-hop induction heads, full size (Table 6): UTF with H=2, L=2, d=28, d_in=30 -> m = m̄ = 456.
# Only E and U are trained unless --freeze_attn=False etc.; universal.py runs sparse / random / full:
#   python universal.py experiments --which=table1 --size=paper --seeds=0,1,2,3,4
#   python train.py config/universal_khop1.py --construction=sparse
# 128 batch x 99 tokens = 12,672 tokens/iter, 10000 iters
out_dir = 'out/universal_khop1'
task = 'khop'
khop_k = 1
n_test = 1000
variant = 'universal'
pos_emb = True                   # learned positions, trained with E and U (docs/deviations.md#k-hop-positions)
n_layer = 2
n_head = 2
head_dim = 28
n_embd = 456
batch_size = 128
max_iters = 10000
learning_rate = 1e-4
warmup_iters = 1000
weight_decay = 0.01
eval_interval = 1000
checkpoint_frozen = False       # ckpt.pt: the trained weights and the frozen ones' hashes, a few MB
                                # (docs/runs.md#checkpoints)
