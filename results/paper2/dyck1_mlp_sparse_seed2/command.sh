OMP_NUM_THREADS=1 python train.py config/cpu/universal_dyck1.py --residual=True --mlp=True --construction=sparse --seed=2 --out_dir=out/universal/cpu/dyck1_mlp_sparse_seed2 --overwrite=True
