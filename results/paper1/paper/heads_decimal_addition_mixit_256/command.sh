python train.py config/table11_decimal_addition_mixit.py --n_head=256 --micro_batch_size=128 --device=cuda --out_dir=out/gpu/paper/runs/heads_decimal_addition_mixit_256 --overwrite=True
