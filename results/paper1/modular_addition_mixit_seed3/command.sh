OMP_NUM_THREADS=1 python train.py config/cpu/modular_addition_mixit.py --seed=3 --mixit_seed=3 --device=cpu --compile=False --dtype=float32 --out_dir=out/abl/modadd_mixit_seed3
