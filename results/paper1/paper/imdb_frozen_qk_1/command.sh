python train.py config/yelp_frozen_qk.py --sentiment_data_dir=data/imdb --seed=1 --device=cuda --out_dir=out/gpu/paper/runs/imdb_frozen_qk_1 --overwrite=True
