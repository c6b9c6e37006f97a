OMP_NUM_THREADS=1 python train.py config/cpu/memorization_mixit.py --n_embd=12 --n_head=6 --seed=2 --mixit_seed=2 --device=cpu --out_dir=out/abl/memorization_mixit_w12_seed2
