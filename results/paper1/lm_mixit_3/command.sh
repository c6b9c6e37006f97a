OMP_NUM_THREADS=1 python train.py config/cpu/wikitext_mixit.py --seed=3 --device=cpu --out_dir=out/sweeps/lm_mixit_3
