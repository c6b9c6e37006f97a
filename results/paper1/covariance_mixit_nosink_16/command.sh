OMP_NUM_THREADS=1 python train.py config/cpu/table6_mixit.py --n_layer=16 --mixit_sink_head=False --device=cpu --out_dir=out/sweeps/covariance_mixit_nosink_16
OMP_NUM_THREADS=1 python sde.py covariance out/sweeps/covariance_mixit_nosink_16/ckpt.pt --save=out/sweeps/covariance_mixit_nosink_16/covariance.json
