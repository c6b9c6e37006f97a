OMP_NUM_THREADS=1 python train.py config/cpu/universal_dyck1.py --seed=0 --learning_rate=0.003 --max_iters=4000 --out_dir=out/search/dyck1_attn_random_lr3e-3_4k --overwrite=True
