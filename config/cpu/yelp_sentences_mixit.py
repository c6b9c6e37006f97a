# Yelp sentence sentiment (paper 1, Table 3) at CPU size, variant mixit.
# OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_mixit.py

include('yelp_sentences.py')
variant = 'mixit'
causal = False
out_dir = 'out/cpu/yelp_sentences_mixit'
