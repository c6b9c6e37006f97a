OMP_NUM_THREADS=1 python train.py config/cpu/table5_mixit.py --n_layer=8 --seed=2 --mixit_seed=2 --learning_rate=1e-3 --device=cpu --out_dir=out/sweeps/depth_mixit_seed2_lr1e-3_8
