# Paper 1, Table 5 (MixiT against the random transformer by depth), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/table5_mixit.py --n_layer=16

include('table5.py')
variant = 'mixit'
out_dir = 'out/table5_mixit'
