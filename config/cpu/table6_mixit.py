# Paper 1, Table 6 at CPU scale (last-layer token covariance by depth), variant mixit.
# python train.py config/cpu/table6_mixit.py --n_layer=8

include('table6.py')
variant = 'mixit'
out_dir = 'out/cpu/table6_mixit'
