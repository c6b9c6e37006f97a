# Decimal addition of two 10-digit numbers (paper 1, Table 3), variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/decimal_addition_standard.py

include('decimal_addition.py')
variant = 'standard'
out_dir = 'out/decimal_addition_standard'
