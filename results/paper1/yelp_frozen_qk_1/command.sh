OMP_NUM_THREADS=1 python train.py config/cpu/yelp_sentences_frozen_qk.py --seed=1 --device=cpu --out_dir=out/sweeps/yelp_frozen_qk_1
