# Yelp polarity sentiment classification (paper 1, Tables 3 and 10), variant standard.
# python train.py config/yelp_standard.py    (IMDb instead: --sentiment_data_dir=data/imdb)

include('yelp.py')
variant = 'standard'
out_dir = 'out/yelp_standard'
