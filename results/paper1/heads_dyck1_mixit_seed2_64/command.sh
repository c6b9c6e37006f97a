OMP_NUM_THREADS=1 python train.py config/cpu/dyck1_mixit.py --n_head=64 --seed=2 --mixit_seed=2 --device=cpu --out_dir=out/sweeps/heads_dyck1_mixit_seed2_64
