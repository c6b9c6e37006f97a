# Memorization of 512^2 random key-value pairs (paper 1, Table 4), variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/memorization_standard.py

include('memorization.py')
variant = 'standard'
out_dir = 'out/memorization_standard'
