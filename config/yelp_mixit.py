# Yelp polarity sentiment classification (paper 1, Tables 3 and 10), variant mixit.
# python train.py config/yelp_mixit.py       (IMDb instead: --sentiment_data_dir=data/imdb)
# Non-causal attention / mixing over all 256 positions.

include('yelp.py')
variant = 'mixit'
causal = False
out_dir = 'out/yelp_mixit'
