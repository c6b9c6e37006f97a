OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_mixit.py --retrieval_m_max=8 --max_iters=1000 --device=cpu --out_dir=out/sweeps/mmax_mixit_8
