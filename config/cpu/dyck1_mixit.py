# Dyck-1 (paper 1, Table 3) at CPU scale in the authors' format, variant mixit.
# python train.py config/cpu/dyck1_mixit.py

include('dyck1.py')
variant = 'mixit'
n_embd = 128
n_head = 128       # MixiT needs many static heads to form a prefix count (paper 1, Table 11); heads of width 1
eval_interval = 250
out_dir = 'out/cpu/dyck1_mixit'
