# Dyck-1 balanced-parentheses classification, length 40 (paper 1, Table 3), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/dyck1_mixit.py

include('dyck1.py')
variant = 'mixit'
out_dir = 'out/dyck1_mixit'
