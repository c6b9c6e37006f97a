python train.py config/yelp_mixit.py --sentiment_data_dir=data/imdb --seed=1 --device=cuda --out_dir=out/gpu/paper/runs/imdb_mixit_1 --overwrite=True
