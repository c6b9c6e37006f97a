OMP_NUM_THREADS=1 python train.py config/cpu/dyck1_mixit.py --n_head=128 --depth_alpha=1 --activation_cminus=1 --device=cpu --out_dir=out/sweeps/heads_dyck1_mixit_depthscaled_128
