python train.py config/memorization_standard.py --micro_batch_size=32768 --device=cuda --out_dir=out/gpu/paper/runs/memorization_standard --overwrite=True
