# k-hop induction heads, k ~ U{0..16} (paper 1, Table 1), variant frozen_qk.
# torchrun --standalone --nproc_per_node=8 train.py config/khop_frozen_qk.py

include('khop.py')
variant = 'frozen_qk'
out_dir = 'out/khop_frozen_qk'
