OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_mixit.py --seed=1 --device=cpu --out_dir=out/sweeps/yelp_mixit_1
