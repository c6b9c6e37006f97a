OMP_NUM_THREADS=1 python train.py config/cpu/memorization_standard.py --seed=2 --train_order=epochs --device=cpu --out_dir=out/abl/memorization_standard_epochs_seed2
