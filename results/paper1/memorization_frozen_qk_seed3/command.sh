OMP_NUM_THREADS=1 python train.py config/cpu/memorization_frozen_qk.py --seed=3 --device=cpu --out_dir=out/abl/memorization_frozen_qk_seed3
