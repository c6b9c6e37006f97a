# Decimal addition of two 10-digit numbers (paper 1, Table 3), variant frozen_qk.
# torchrun --standalone --nproc_per_node=8 train.py config/decimal_addition_frozen_qk.py

include('decimal_addition.py')
variant = 'frozen_qk'
out_dir = 'out/decimal_addition_frozen_qk'
