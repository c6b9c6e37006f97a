# WikiText-2 language modeling (paper 1, Table 2) at CPU size, variant standard.
# OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_standard.py

include('wikitext.py')
variant = 'standard'
out_dir = 'out/cpu/wikitext_standard'
