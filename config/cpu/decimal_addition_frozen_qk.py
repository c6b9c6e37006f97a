# Decimal addition (paper 1, Table 3) at CPU scale, variant frozen_qk.
# python train.py config/cpu/decimal_addition_frozen_qk.py

include('decimal_addition.py')
variant = 'frozen_qk'
qk_init_std = 0.02 * (1024 / 128) ** 0.5   # the paper's frozen score scale at width 128 (with 0.02: 40.1% per
                                           # digit at 1,000 steps; docs/deviations.md#frozen-qk-score-scale)
out_dir = 'out/cpu/decimal_addition_frozen_qk'
