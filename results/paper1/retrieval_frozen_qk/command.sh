OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_frozen_qk.py --device=cpu --compile=False --dtype=float32
