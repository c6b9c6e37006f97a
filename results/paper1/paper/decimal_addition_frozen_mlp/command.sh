python train.py config/decimal_addition_frozen_mlp.py --micro_batch_size=128 --device=cuda --out_dir=out/gpu/paper/runs/decimal_addition_frozen_mlp --overwrite=True
