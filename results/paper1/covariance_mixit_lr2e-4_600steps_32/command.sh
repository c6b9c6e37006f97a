OMP_NUM_THREADS=1 python train.py config/cpu/table6_mixit.py --n_layer=32 --learning_rate=2e-4 --max_iters=600 --warmup_iters=60 --device=cpu --out_dir=out/sweeps/covariance_mixit_lr2e-4_600steps_32
OMP_NUM_THREADS=1 python sde.py covariance out/sweeps/covariance_mixit_lr2e-4_600steps_32/ckpt.pt --save=out/sweeps/covariance_mixit_lr2e-4_600steps_32/covariance.json
