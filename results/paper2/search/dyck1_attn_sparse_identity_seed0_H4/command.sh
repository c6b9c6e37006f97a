OMP_NUM_THREADS=1 python train.py config/cpu/universal_dyck1.py --construction=sparse_identity --seed=0 --n_head=4 --n_embd=384 --out_dir=out/search/dyck1_attn_sparse_H4 --overwrite=True
