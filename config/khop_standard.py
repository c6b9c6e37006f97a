# k-hop induction heads, k ~ U{0..16} (paper 1, Table 1), variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/khop_standard.py

include('khop.py')
variant = 'standard'
out_dir = 'out/khop_standard'
