python train.py config/khop_standard.py --seed=1 --micro_batch_size=128 --device=cuda --out_dir=out/gpu/paper/runs/khop_standard_1 --overwrite=True
