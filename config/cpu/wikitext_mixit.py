# WikiText-2 language modeling (paper 1, Table 2) at CPU size, variant mixit.
# OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_mixit.py

include('wikitext.py')
variant = 'mixit'
out_dir = 'out/cpu/wikitext_mixit'
