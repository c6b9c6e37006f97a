OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop1.py --residual=True --norm=layer --seed=0 --pos_emb=False --out_dir=out/universal/cpu/khop1_res_ln_random_seed0_nopos --overwrite=True
