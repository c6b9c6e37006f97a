# Wikitext-103 language modeling (paper 1, Tables 2 and 9), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/wikitext_mixit.py

include('wikitext.py')
variant = 'mixit'
out_dir = 'out/wikitext_mixit'
