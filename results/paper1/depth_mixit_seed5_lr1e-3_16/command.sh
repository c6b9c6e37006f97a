OMP_NUM_THREADS=1 python train.py config/cpu/table5_mixit.py --n_layer=16 --seed=5 --mixit_seed=5 --learning_rate=1e-3 --device=cpu --out_dir=out/sweeps/depth_mixit_seed5_lr1e-3_16
