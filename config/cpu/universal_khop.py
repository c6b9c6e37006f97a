# Paper 2 §5 induction heads, CPU size: what the k-hop runs share; config/cpu/universal_khop<k>.py set k, the
# depth, the width and the schedule.
include('universal.py')
task = 'khop'
n_test = 200
pos_emb = True                   # learned positions, trained with E and U (docs/deviations.md#k-hop-positions)
n_head = 2
head_dim = 4
