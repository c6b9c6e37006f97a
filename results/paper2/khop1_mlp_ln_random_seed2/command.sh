OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop1.py --residual=True --mlp=True --norm=layer --seed=2 --out_dir=out/universal/cpu/khop1_mlp_ln_random_seed2 --overwrite=True
