# Paper 2 §5 induction heads, full size (Table 6): what the k-hop runs share; config/universal_khop<k>.py set k,
# the depth and the widths.
include('universal.py')
task = 'khop'
n_test = 1000
pos_emb = True                   # learned positions, trained with E and U (docs/deviations.md#k-hop-positions)
n_head = 2
batch_size = 128
learning_rate = 1e-4
warmup_iters = 1000
