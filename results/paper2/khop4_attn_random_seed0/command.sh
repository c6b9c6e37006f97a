OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop4.py --seed=0 --out_dir=out/universal/cpu/khop4_attn_random_seed0 --overwrite=True
