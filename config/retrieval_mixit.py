# Retrieval / needle in a haystack, V = 256, m_max = 30 (paper 1, Table 1, Fig. 2), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/retrieval_mixit.py

include('retrieval.py')
variant = 'mixit'
out_dir = 'out/retrieval_mixit'
