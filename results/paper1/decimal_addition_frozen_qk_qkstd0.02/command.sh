OMP_NUM_THREADS=1 python train.py config/cpu/decimal_addition_frozen_qk.py --qk_init_std=0.02 --out_dir=out/cpu/decimal_addition_frozen_qk_qkstd0.02 --device=cpu --compile=False --dtype=float32
