OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop3.py --residual=True --seed=0 --out_dir=out/universal/cpu/khop3_res_random_seed0 --overwrite=True
