python train.py config/khop_frozen_qk.py --seed=1 --micro_batch_size=128 --n_embd=1024 --device=cuda --out_dir=out/gpu/paper/runs/khop_frozen_qk_width1024_1 --overwrite=True
