OMP_NUM_THREADS=1 python train.py config/cpu/memorization_standard.py --overwrite=True --device=cpu --compile=False --dtype=float32
