# Decimal addition (paper 1, Table 3) at CPU scale, variant standard.
# python train.py config/cpu/decimal_addition_standard.py

include('decimal_addition.py')
variant = 'standard'
max_iters = 1500
out_dir = 'out/cpu/decimal_addition_standard'
