# Modular addition (paper 1, Table 3 shape) at CPU scale, variant standard.
# python train.py config/cpu/modular_addition_standard.py

include('modular_addition.py')
variant = 'standard'
max_iters = 5000
eval_interval = 500
out_dir = 'out/cpu/modular_addition_standard'
