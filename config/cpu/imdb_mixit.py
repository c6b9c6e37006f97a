# Sentiment on whole IMDb reviews (paper 1, Table 3) at CPU scale, variant mixit.
# OMP_NUM_THREADS=1 python train.py config/cpu/imdb_mixit.py
# Non-causal attention / mixing over all 256 positions, pads included.

include('imdb.py')
variant = 'mixit'
causal = False
out_dir = 'out/cpu/imdb_mixit'
