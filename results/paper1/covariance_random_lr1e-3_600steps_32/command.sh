OMP_NUM_THREADS=1 python train.py config/cpu/table6_random.py --n_layer=32 --learning_rate=1e-3 --max_iters=600 --warmup_iters=60 --device=cpu --out_dir=out/sweeps/covariance_random_lr1e-3_600steps_32
OMP_NUM_THREADS=1 python sde.py covariance out/sweeps/covariance_random_lr1e-3_600steps_32/ckpt.pt --save=out/sweeps/covariance_random_lr1e-3_600steps_32/covariance.json
