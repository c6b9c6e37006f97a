OMP_NUM_THREADS=1 python train.py config/cpu/modular_addition_mixit.py --max_iters=40000 --seed=2 --mixit_seed=2 --device=cpu --out_dir=out/seeds/modular_addition_mixit_40000steps_seed2
