# Sentiment on whole IMDb reviews (paper 1, Table 3) at CPU scale, variant frozen_mlp.
# OMP_NUM_THREADS=1 python train.py config/cpu/imdb_frozen_mlp.py

include('imdb.py')
variant = 'frozen_mlp'
out_dir = 'out/cpu/imdb_frozen_mlp'
