# Memorization of 512^2 key-value pairs with paper 1's Table 8 hyperparameters, variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/memorization_table8_standard.py

include('memorization_table8.py')
variant = 'standard'
out_dir = 'out/memorization_table8_standard'
