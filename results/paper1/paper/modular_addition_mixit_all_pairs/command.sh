python train.py config/modular_addition_mixit.py --micro_batch_size=256 --device=cuda --out_dir=out/gpu/paper/runs/modular_addition_mixit_all_pairs --overwrite=True --modular_addition_all_pairs=True
