# Memorization of 512^2 random key-value pairs (paper 1, Table 4), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/memorization_mixit.py

include('memorization.py')
variant = 'mixit'
out_dir = 'out/memorization_mixit'
