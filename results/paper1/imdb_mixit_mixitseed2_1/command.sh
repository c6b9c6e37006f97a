OMP_NUM_THREADS=1 python train.py config/cpu/imdb_mixit.py --seed=1 --mixit_seed=2 --device=cpu --out_dir=out/sweeps/imdb_mixit_mixitseed2_1
