# Modular addition (paper 1, Table 3 shape) at CPU scale, variant frozen_qk.
# python train.py config/cpu/modular_addition_frozen_qk.py

include('modular_addition.py')
variant = 'frozen_qk'
out_dir = 'out/cpu/modular_addition_frozen_qk'
