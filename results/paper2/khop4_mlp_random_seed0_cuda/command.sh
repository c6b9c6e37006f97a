OMP_NUM_THREADS=1 python train.py config/cpu/universal_khop4.py --residual=True --mlp=True --seed=0 --device=cuda --out_dir=out/gpu/paper/runs/appf/cpu/khop4_mlp_random_seed0_cuda --overwrite=True
