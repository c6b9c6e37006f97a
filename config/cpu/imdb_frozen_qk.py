# Sentiment on whole IMDb reviews (paper 1, Table 3) at CPU scale, variant frozen_qk.
# OMP_NUM_THREADS=1 python train.py config/cpu/imdb_frozen_qk.py

include('imdb.py')
variant = 'frozen_qk'
out_dir = 'out/cpu/imdb_frozen_qk'
