OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop2.py --residual=True --construction=sparse_identity --seed=0 --out_dir=out/universal/cpu/khop2_res_sparse --overwrite=True
