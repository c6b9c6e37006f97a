# Retrieval / needle in a haystack (paper 1, Table 1 shape) at CPU scale, variant standard.
# python train.py config/cpu/retrieval_standard.py

include('retrieval.py')
variant = 'standard'
out_dir = 'out/cpu/retrieval_standard'
