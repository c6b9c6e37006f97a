OMP_NUM_THREADS=1 python train.py config/universal_khop1.py --construction=sparse_identity --seed=0 --out_dir=out/gpu/paper/runs/universal_e/paper/khop1_attn_sparse --overwrite=True
