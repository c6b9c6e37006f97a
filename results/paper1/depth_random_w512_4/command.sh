OMP_NUM_THREADS=1 python train.py config/cpu/table5_random.py --n_layer=4 --seed=1 --n_embd=512 --n_head=128 --device=cpu --out_dir=out/sweeps/depth_random_w512_4
