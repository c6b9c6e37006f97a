# Sentiment on whole IMDb reviews (paper 1, Table 3) at CPU scale, variant standard.
# OMP_NUM_THREADS=1 python train.py config/cpu/imdb_standard.py

include('imdb.py')
variant = 'standard'
out_dir = 'out/cpu/imdb_standard'
