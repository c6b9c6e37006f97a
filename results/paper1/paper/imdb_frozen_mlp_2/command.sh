python train.py config/yelp_frozen_mlp.py --sentiment_data_dir=data/imdb --seed=2 --device=cuda --out_dir=out/gpu/paper/runs/imdb_frozen_mlp_2 --overwrite=True
