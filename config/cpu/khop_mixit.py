# k-hop induction heads (paper 1, Table 1) at CPU scale, variant mixit.
# python train.py config/cpu/khop_mixit.py

include('khop.py')
variant = 'mixit'
out_dir = 'out/cpu/khop_mixit'
