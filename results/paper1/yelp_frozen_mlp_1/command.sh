OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_frozen_mlp.py --seed=1 --device=cpu --out_dir=out/sweeps/yelp_frozen_mlp_1
