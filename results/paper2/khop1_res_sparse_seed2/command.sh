OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop1.py --residual=True --construction=sparse --seed=2 --n_embd=210 --out_dir=out/universal/cpu/khop1_res_sparse_seed2 --overwrite=True
