OMP_NUM_THREADS=1 python train.py config/cpu/imdb_mixit.py --seed=1 --mixit_seed=1 --device=cpu --out_dir=out/sweeps/imdb_mixit_mixitseed1_1
