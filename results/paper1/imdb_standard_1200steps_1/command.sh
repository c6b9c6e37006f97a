OMP_NUM_THREADS=1 python train.py config/cpu/imdb_standard.py --seed=1 --max_iters=1200 --warmup_iters=200 --eval_interval=300 --device=cpu --out_dir=out/sweeps/imdb_standard_1200steps_1
