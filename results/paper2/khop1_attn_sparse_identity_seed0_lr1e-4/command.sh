OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop1.py --construction=sparse_identity --seed=0 --learning_rate=1e-4 --out_dir=out/universal/cpu/khop1_attn_sparse_lr1e-4 --overwrite=True
