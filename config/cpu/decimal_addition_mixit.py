# Decimal addition (paper 1, Table 3) at CPU scale, variant mixit.
# python train.py config/cpu/decimal_addition_mixit.py

include('decimal_addition.py')
variant = 'mixit'
n_head = 128       # MixiT needs many static heads to select fixed positions (paper 1, Table 11); heads of width 1
out_dir = 'out/cpu/decimal_addition_mixit'
