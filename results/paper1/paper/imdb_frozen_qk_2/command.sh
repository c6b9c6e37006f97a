python train.py config/yelp_frozen_qk.py --sentiment_data_dir=data/imdb --seed=2 --device=cuda --out_dir=out/gpu/paper/runs/imdb_frozen_qk_2 --overwrite=True
