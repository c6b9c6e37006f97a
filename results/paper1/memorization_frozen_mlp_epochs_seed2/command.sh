OMP_NUM_THREADS=1 python train.py config/cpu/memorization_frozen_mlp.py --seed=2 --train_order=epochs --device=cpu --out_dir=out/abl/memorization_frozen_mlp_epochs_seed2
