OMP_NUM_THREADS=1 python train.py config/cpu/khop_mixit.py --seed=2 --mixit_seed=2 --device=cpu --compile=False --dtype=float32 --out_dir=out/seeds/khop_mixit_seed2
