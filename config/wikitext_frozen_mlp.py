# Wikitext-103 language modeling (paper 1, Tables 2 and 9), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/wikitext_frozen_mlp.py

include('wikitext.py')
variant = 'frozen_mlp'
out_dir = 'out/wikitext_frozen_mlp'
