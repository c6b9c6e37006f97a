OMP_NUM_THREADS=1 python train.py config/universal_dyck1.py --residual=True --norm=layer --seed=0 --out_dir=out/gpu/paper/runs/universal_d/paper/dyck1_res_ln_random_seed0 --overwrite=True
