OMP_NUM_THREADS=1 python train.py config/cpu/khop_mixit.py --seed=3 --mixit_seed=3 --device=cpu --compile=False --dtype=float32 --out_dir=out/seeds/khop_mixit_seed3
