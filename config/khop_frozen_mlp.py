# k-hop induction heads, k ~ U{0..16} (paper 1, Table 1), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/khop_frozen_mlp.py

include('khop.py')
variant = 'frozen_mlp'
out_dir = 'out/khop_frozen_mlp'
