# Memorization (paper 1, Table 4) at CPU scale, variant frozen_mlp.
# python train.py config/cpu/memorization_frozen_mlp.py

include('memorization.py')
variant = 'frozen_mlp'
memorization_n_keys = 64        # in each variant's file: experiments/paper1/tables.py reads it from this text
out_dir = 'out/cpu/memorization_frozen_mlp'
