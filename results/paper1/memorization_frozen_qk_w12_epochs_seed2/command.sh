OMP_NUM_THREADS=1 python train.py config/cpu/memorization_frozen_qk.py --n_embd=12 --n_head=6 --seed=2 --train_order=epochs --device=cpu --out_dir=out/abl/memorization_frozen_qk_w12_epochs_seed2
