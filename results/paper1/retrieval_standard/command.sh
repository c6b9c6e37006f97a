OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_standard.py --device=cpu --compile=False --dtype=float32
