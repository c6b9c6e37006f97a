OMP_NUM_THREADS=2 python train.py config/cpu/table5_random.py --n_layer=8 --seed=3 --n_embd=384 --n_head=96 --max_iters=4500 --device=cpu --out_dir=out/sweeps/depth_random_w384_seed3_4500steps_8
