OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_standard.py --retrieval_m_max=32 --max_iters=6000 --qk_init_std=0.0566 --device=cpu --out_dir=out/sweeps/mmax_standard_qkstd0.0566_6000steps_32
