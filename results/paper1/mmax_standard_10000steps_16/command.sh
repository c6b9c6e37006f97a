OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_standard.py --retrieval_m_max=16 --max_iters=10000 --device=cpu --out_dir=out/sweeps/mmax_standard_10000steps_16
