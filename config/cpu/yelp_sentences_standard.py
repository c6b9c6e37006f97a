# Yelp sentence sentiment (paper 1, Table 3) at CPU size, variant standard.
# OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_standard.py

include('yelp_sentences.py')
variant = 'standard'
out_dir = 'out/cpu/yelp_sentences_standard'
