python train.py config/khop_frozen_qk.py --seed=1 --micro_batch_size=128 --learning_rate=5e-4 --device=cuda --out_dir=out/gpu/paper/runs/khop_frozen_qk_lr5e-4_1 --overwrite=True
