OMP_NUM_THREADS=1 python train.py config/cpu/table5_random.py --n_layer=16 --seed=1 --device=cpu --out_dir=out/sweeps/depth_random_16
