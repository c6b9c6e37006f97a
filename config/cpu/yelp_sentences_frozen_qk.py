# Yelp sentence sentiment (paper 1, Table 3) at CPU size, variant frozen_qk.
# OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_frozen_qk.py

include('yelp_sentences.py')
variant = 'frozen_qk'
out_dir = 'out/cpu/yelp_sentences_frozen_qk'
