# Paper 1, Table 6 at CPU scale (last-layer token covariance by depth), variant random.
# python train.py config/cpu/table6_random.py --n_layer=8

include('table6.py')
variant = 'random'
out_dir = 'out/cpu/table6_random'
