# Retrieval / needle in a haystack, V = 256, m_max = 30 (paper 1, Table 1, Fig. 2), variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/retrieval_standard.py

include('retrieval.py')
variant = 'standard'
out_dir = 'out/retrieval_standard'
