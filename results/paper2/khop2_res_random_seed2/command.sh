OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop2.py --residual=True --seed=2 --out_dir=out/universal/cpu/khop2_res_random_seed2 --overwrite=True
