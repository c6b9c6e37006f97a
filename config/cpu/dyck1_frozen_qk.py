# Dyck-1 (paper 1, Table 3) at CPU scale in the authors' format, variant frozen_qk.
# python train.py config/cpu/dyck1_frozen_qk.py

include('dyck1.py')
variant = 'frozen_qk'
out_dir = 'out/cpu/dyck1_frozen_qk'
