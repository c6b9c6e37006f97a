OMP_NUM_THREADS=1 python train.py config/cpu/table5_mixit.py --n_layer=4 --seed=3 --mixit_seed=3 --max_iters=4500 --device=cpu --out_dir=out/sweeps/depth_mixit_seed3_4500steps_4
