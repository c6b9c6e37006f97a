python train.py config/yelp_mixit.py --sentiment_data_dir=data/imdb --seed=2 --device=cuda --out_dir=out/gpu/paper/runs/imdb_mixit_2 --overwrite=True
