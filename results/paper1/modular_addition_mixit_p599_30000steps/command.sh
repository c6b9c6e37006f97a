OMP_NUM_THREADS=2 python train.py config/cpu/modular_addition_mixit.py --modular_addition_p=599 --max_iters=30000 --device=cpu --out_dir=out/cpu/modular_addition_mixit_p599_30000steps
