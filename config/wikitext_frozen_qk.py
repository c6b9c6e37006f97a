# Wikitext-103 language modeling (paper 1, Tables 2 and 9), variant frozen_qk.
# torchrun --standalone --nproc_per_node=8 train.py config/wikitext_frozen_qk.py

include('wikitext.py')
variant = 'frozen_qk'
out_dir = 'out/wikitext_frozen_qk'
