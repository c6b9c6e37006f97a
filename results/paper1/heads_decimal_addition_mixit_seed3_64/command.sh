OMP_NUM_THREADS=1 python train.py config/cpu/table11_decimal_addition_mixit.py --n_head=64 --seed=3 --mixit_seed=3 --device=cpu --out_dir=out/sweeps/heads_decimal_addition_mixit_seed3_64
