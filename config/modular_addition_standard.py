# Modular addition, p = 599 (paper 1, Table 3), variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/modular_addition_standard.py

include('modular_addition.py')
variant = 'standard'
out_dir = 'out/modular_addition_standard'
