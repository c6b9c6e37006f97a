OMP_NUM_THREADS=1 python train.py config/cpu/table5_mixit.py --n_layer=8 --mixit_sink_head=False --device=cpu --out_dir=out/sweeps/depth_mixit_nosink_8
