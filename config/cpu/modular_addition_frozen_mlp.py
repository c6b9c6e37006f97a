# Modular addition (paper 1, Table 3 shape) at CPU scale, variant frozen_mlp.
# python train.py config/cpu/modular_addition_frozen_mlp.py

include('modular_addition.py')
variant = 'frozen_mlp'
out_dir = 'out/cpu/modular_addition_frozen_mlp'
