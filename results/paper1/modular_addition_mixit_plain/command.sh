OMP_NUM_THREADS=1 python train.py config/cpu/modular_addition_mixit.py --device=cpu --compile=False --dtype=float32 --mixit_block=plain --out_dir=out/cpu/modular_addition_mixit_plain
