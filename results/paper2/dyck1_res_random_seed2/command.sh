OMP_NUM_THREADS=1 python train.py config/cpu/universal_dyck1.py --residual=True --seed=2 --out_dir=out/universal/cpu/dyck1_res_random_seed2 --overwrite=True
