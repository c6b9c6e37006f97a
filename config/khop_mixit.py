# k-hop induction heads, k ~ U{0..16} (paper 1, Table 1), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/khop_mixit.py

include('khop.py')
variant = 'mixit'
out_dir = 'out/khop_mixit'
