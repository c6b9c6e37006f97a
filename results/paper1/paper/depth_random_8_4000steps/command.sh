python train.py config/table5_random.py --n_layer=8 --seed=1 --micro_batch_size=1000 --max_iters=4000 --eval_interval=500 --device=cuda --out_dir=out/gpu/paper/runs/depth_random_8 --overwrite=True
