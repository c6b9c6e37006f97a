# Modular addition, p = 599 (paper 1, Table 3), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/modular_addition_frozen_mlp.py

include('modular_addition.py')
variant = 'frozen_mlp'
out_dir = 'out/modular_addition_frozen_mlp'
