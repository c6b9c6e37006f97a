OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop4.py --residual=True --seed=0 --out_dir=out/universal/cpu/khop4_res_random_seed0 --overwrite=True
