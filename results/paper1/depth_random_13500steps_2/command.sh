OMP_NUM_THREADS=1 python train.py config/cpu/table5_random.py --n_layer=2 --seed=1 --max_iters=13500 --device=cpu --out_dir=out/sweeps/depth_random_13500steps_2
