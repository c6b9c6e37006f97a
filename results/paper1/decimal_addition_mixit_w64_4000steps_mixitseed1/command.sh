OMP_NUM_THREADS=1 python train.py config/cpu/decimal_addition_mixit.py --n_embd=64 --n_head=64 --max_iters=4000 --eval_interval=1000 --mixit_seed=1 --out_dir=/tmp/dec5_w64_seed1 --overwrite=True
