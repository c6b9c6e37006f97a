OMP_NUM_THREADS=1 python train.py config/cpu/memorization_standard.py --n_embd=12 --n_head=6 --seed=3 --device=cpu --out_dir=out/abl/memorization_standard_w12_seed3
