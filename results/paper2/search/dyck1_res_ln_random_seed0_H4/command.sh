OMP_NUM_THREADS=1 python train.py config/cpu/universal_dyck1.py --residual=True --norm=layer --seed=0 --n_head=4 --n_embd=384 --out_dir=out/search/dyck1_res_ln_random_seed0_H4 --overwrite=True
