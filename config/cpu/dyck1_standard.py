# Dyck-1 (paper 1, Table 3) at CPU scale in the authors' format, variant standard.
# python train.py config/cpu/dyck1_standard.py

include('dyck1.py')
variant = 'standard'
out_dir = 'out/cpu/dyck1_standard'
