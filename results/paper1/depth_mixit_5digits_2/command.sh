OMP_NUM_THREADS=1 python train.py config/cpu/table5_mixit.py --n_layer=2 --seed=1 --mixit_seed=1 --decimal_addition_n_digits=5 --device=cpu --out_dir=out/sweeps/depth_mixit_5digits_2
