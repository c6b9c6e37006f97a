OMP_NUM_THREADS=1 python train.py config/cpu/universal_dyck1.py --construction=sparse --seed=0 --n_head=4 --n_embd=384 --max_iters=6000 --out_dir=out/search/dyck1_attn_sparse_H4_6k --overwrite=True
