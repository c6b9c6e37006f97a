OMP_NUM_THREADS=1 python train.py config/cpu/modular_addition_standard.py --seed=2 --train_order=epochs --device=cpu --compile=False --dtype=float32 --out_dir=out/abl/modadd_standard_epochs_seed2
