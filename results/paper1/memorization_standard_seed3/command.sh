OMP_NUM_THREADS=1 python train.py config/cpu/memorization_standard.py --seed=3 --device=cpu --out_dir=out/abl/memorization_standard_seed3
