# Paper 1, Table 5 at CPU scale (MixiT against the random transformer by depth), variant mixit.
# python train.py config/cpu/table5_mixit.py --n_layer=8

include('table5.py')
variant = 'mixit'
out_dir = 'out/cpu/table5_mixit'
