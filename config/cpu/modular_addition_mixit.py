# Modular addition (paper 1, Table 3 shape) at CPU scale, variant mixit.
# python train.py config/cpu/modular_addition_mixit.py

include('modular_addition.py')
variant = 'mixit'
n_head = 32        # Table 8's heads of width 4, with its learning rate (docs/paper1.md#modular-addition)
learning_rate = 1e-3
max_iters = 10000
eval_interval = 1000
out_dir = 'out/cpu/modular_addition_mixit'
