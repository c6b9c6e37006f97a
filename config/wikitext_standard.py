# Wikitext-103 language modeling (paper 1, Tables 2 and 9), variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/wikitext_standard.py

include('wikitext.py')
variant = 'standard'
out_dir = 'out/wikitext_standard'
