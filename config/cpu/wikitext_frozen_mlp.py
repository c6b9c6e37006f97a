# WikiText-2 language modeling (paper 1, Table 2) at CPU size, variant frozen_mlp.
# OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_frozen_mlp.py

include('wikitext.py')
variant = 'frozen_mlp'
out_dir = 'out/cpu/wikitext_frozen_mlp'
