OMP_NUM_THREADS=2 python train.py config/cpu/table5_random.py --n_layer=4 --seed=3 --n_embd=512 --n_head=128 --max_iters=4500 --device=cpu --out_dir=out/sweeps/depth_random_w512_seed3_4500steps_4
