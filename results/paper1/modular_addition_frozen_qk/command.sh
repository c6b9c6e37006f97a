OMP_NUM_THREADS=1 python train.py config/cpu/modular_addition_frozen_qk.py --device=cpu --compile=False --dtype=float32  --out_dir=out/cpu/modular_addition_frozen_qk
