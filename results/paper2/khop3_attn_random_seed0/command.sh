OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop3.py --seed=0 --out_dir=out/universal/cpu/khop3_attn_random_seed0 --overwrite=True
