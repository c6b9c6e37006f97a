# k-hop induction heads (paper 1, Table 1) at CPU scale, variant standard.
# python train.py config/cpu/khop_standard.py

include('khop.py')
variant = 'standard'
out_dir = 'out/cpu/khop_standard'
