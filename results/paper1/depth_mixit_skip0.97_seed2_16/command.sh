OMP_NUM_THREADS=1 python train.py config/cpu/table5_mixit.py --n_layer=16 --seed=2 --mixit_seed=2 --skip_scaling=0.97 --device=cpu --out_dir=out/sweeps/depth_mixit_skip0.97_seed2_16
