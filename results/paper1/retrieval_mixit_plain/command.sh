OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_mixit.py --device=cpu --compile=False --dtype=float32 --mixit_block=plain --out_dir=out/cpu/retrieval_mixit_plain
