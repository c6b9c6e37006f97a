OMP_NUM_THREADS=1 python train.py config/cpu/dyck1_mixit.py --n_head=128 --n_layer=4 --max_iters=4500 --device=cpu --out_dir=out/sweeps/heads_dyck1_mixit_4layers_4500steps_128
