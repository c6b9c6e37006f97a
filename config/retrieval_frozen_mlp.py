# Retrieval / needle in a haystack, V = 256, m_max = 30 (paper 1, Table 1, Fig. 2), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/retrieval_frozen_mlp.py

include('retrieval.py')
variant = 'frozen_mlp'
out_dir = 'out/retrieval_frozen_mlp'
