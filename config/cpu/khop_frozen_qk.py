# k-hop induction heads (paper 1, Table 1) at CPU scale, variant frozen_qk.
# python train.py config/cpu/khop_frozen_qk.py

include('khop.py')
variant = 'frozen_qk'
qk_init_std = 0.02 * (1024 / 64) ** 0.5    # the paper's frozen score scale at width 64
                                           # (docs/deviations.md#frozen-qk-score-scale)
out_dir = 'out/cpu/khop_frozen_qk'
