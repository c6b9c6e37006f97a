python train.py config/modular_addition_standard.py --micro_batch_size=256 --device=cuda --out_dir=out/gpu/paper/runs/modular_addition_standard --overwrite=True
