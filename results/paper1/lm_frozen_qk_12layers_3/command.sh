OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_frozen_qk.py --seed=3 --n_layer=12 --device=cpu --out_dir=out/sweeps/lm_frozen_qk_12layers_3
