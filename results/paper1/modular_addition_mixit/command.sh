OMP_NUM_THREADS=1 python train.py config/cpu/modular_addition_mixit.py --device=cpu --compile=False --dtype=float32
