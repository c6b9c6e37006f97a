OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop2.py --residual=True --seed=1 --out_dir=out/universal/cpu/khop2_res_random_seed1 --overwrite=True
