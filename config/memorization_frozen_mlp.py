# Memorization of 512^2 random key-value pairs (paper 1, Table 4), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/memorization_frozen_mlp.py

include('memorization.py')
variant = 'frozen_mlp'
out_dir = 'out/memorization_frozen_mlp'
