OMP_NUM_THREADS=1 python train.py config/cpu/dyck1_standard.py --train_on_test=False --device=cpu --compile=False --dtype=float32 --out_dir=out/cpu/dyck1_standard_no_train_on_test --overwrite=True
