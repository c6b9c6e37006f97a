python train.py config/khop_frozen_qk.py --seed=1 --micro_batch_size=128 --qk_init_std=0.028 --device=cuda --out_dir=out/gpu/paper/runs/khop_frozen_qk_std0.028_1 --overwrite=True
