OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_standard.py --seed=3 --device=cpu --out_dir=out/sweeps/lm_standard_3
