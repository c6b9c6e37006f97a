# Decimal addition of two 10-digit numbers (paper 1, Table 3), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/decimal_addition_mixit.py

include('decimal_addition.py')
variant = 'mixit'
out_dir = 'out/decimal_addition_mixit'
