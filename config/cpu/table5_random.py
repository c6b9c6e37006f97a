# Paper 1, Table 5 at CPU scale (MixiT against the random transformer by depth), variant random.
# python train.py config/cpu/table5_random.py --n_layer=8

include('table5.py')
variant = 'random'
rope = True                     # depth.py's do_rope default: rotary positions, no learned position embedding
pos_emb = False
out_dir = 'out/cpu/table5_random'
