python train.py config/memorization_frozen_qk.py --micro_batch_size=32768 --device=cuda --out_dir=out/gpu/paper/runs/memorization_frozen_qk --overwrite=True
