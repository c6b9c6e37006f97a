# Retrieval / needle in a haystack (paper 1, Table 1 shape) at CPU scale, variant mixit.
# python train.py config/cpu/retrieval_mixit.py

include('retrieval.py')
variant = 'mixit'
max_iters = 12000
out_dir = 'out/cpu/retrieval_mixit'
