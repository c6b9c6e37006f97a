OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop1.py --construction=sparse_identity --seed=0 --out_dir=out/universal/cpu/khop1_attn_sparse --overwrite=True
