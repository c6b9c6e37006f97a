# Yelp polarity sentiment classification (paper 1, Tables 3 and 10), variant frozen_qk.
# python train.py config/yelp_frozen_qk.py   (IMDb instead: --sentiment_data_dir=data/imdb)

include('yelp.py')
variant = 'frozen_qk'
out_dir = 'out/yelp_frozen_qk'
