python train.py config/decimal_addition_mixit.py --micro_batch_size=128 --device=cuda --out_dir=out/gpu/paper/runs/decimal_addition_mixit --overwrite=True
