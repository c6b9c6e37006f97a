# Decimal addition (paper 1, Table 3) at CPU scale, variant frozen_mlp.
# python train.py config/cpu/decimal_addition_frozen_mlp.py

include('decimal_addition.py')
variant = 'frozen_mlp'
out_dir = 'out/cpu/decimal_addition_frozen_mlp'
