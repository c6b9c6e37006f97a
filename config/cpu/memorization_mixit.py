# Memorization (paper 1, Table 4) at CPU scale, variant mixit.
# python train.py config/cpu/memorization_mixit.py

include('memorization.py')
variant = 'mixit'
memorization_n_keys = 64        # in each variant's file: experiments/paper1/tables.py reads it from this text
out_dir = 'out/cpu/memorization_mixit'
