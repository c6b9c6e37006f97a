OMP_NUM_THREADS=1 python train.py config/cpu/universal_dyck1.py --residual=True --norm=layer --construction=sparse_identity --seed=0 --out_dir=out/search/dyck1_res_ln_sparse --overwrite=True
