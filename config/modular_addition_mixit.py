# Modular addition, p = 599 (paper 1, Table 3), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/modular_addition_mixit.py

include('modular_addition.py')
variant = 'mixit'
out_dir = 'out/modular_addition_mixit'
