# k-hop induction heads (paper 1, Table 1) at CPU scale, variant frozen_mlp.
# python train.py config/cpu/khop_frozen_mlp.py

include('khop.py')
variant = 'frozen_mlp'
out_dir = 'out/cpu/khop_frozen_mlp'
