# Paper 1, Table 5 (MixiT against the random transformer by depth), variant random.
# torchrun --standalone --nproc_per_node=8 train.py config/table5_random.py --n_layer=16

include('table5.py')
variant = 'random'
rope = True                     # depth.py's do_rope default: rotary positions, no learned position embedding
pos_emb = False
checkpoint_frozen = False       # ckpt.pt: the trained weights and the frozen ones' hashes, a few MB
                                # (docs/runs.md#checkpoints)
out_dir = 'out/table5_random'
