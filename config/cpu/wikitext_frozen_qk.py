# WikiText-2 language modeling (paper 1, Table 2) at CPU size, variant frozen_qk.
# OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_frozen_qk.py

include('wikitext.py')
variant = 'frozen_qk'
out_dir = 'out/cpu/wikitext_frozen_qk'
