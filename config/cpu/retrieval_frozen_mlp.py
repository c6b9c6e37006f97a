# Retrieval / needle in a haystack (paper 1, Table 1 shape) at CPU scale, variant frozen_mlp.
# python train.py config/cpu/retrieval_frozen_mlp.py

include('retrieval.py')
variant = 'frozen_mlp'
out_dir = 'out/cpu/retrieval_frozen_mlp'
