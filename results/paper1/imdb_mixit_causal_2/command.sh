OMP_NUM_THREADS=1 python train.py config/cpu/imdb_mixit.py --seed=2 --causal=True --device=cpu --out_dir=out/sweeps/imdb_mixit_causal_2
