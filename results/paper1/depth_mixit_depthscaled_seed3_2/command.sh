OMP_NUM_THREADS=1 python train.py config/cpu/table5_mixit.py --n_layer=2 --seed=3 --mixit_seed=3 --depth_alpha=1 --device=cpu --out_dir=out/sweeps/depth_mixit_depthscaled_seed3_2
