# Dyck-1 balanced-parentheses classification, length 40 (paper 1, Table 3), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/dyck1_frozen_mlp.py

include('dyck1.py')
variant = 'frozen_mlp'
out_dir = 'out/dyck1_frozen_mlp'
