OMP_NUM_THREADS=1 python train.py config/cpu/modular_addition_frozen_mlp.py --seed=3 --device=cpu --compile=False --dtype=float32 --out_dir=out/seeds/modular_addition_frozen_mlp_seed3
