OMP_NUM_THREADS=1 python train.py config/cpu/imdb_frozen_mlp.py --seed=3 --device=cpu --out_dir=out/sweeps/imdb_frozen_mlp_3
