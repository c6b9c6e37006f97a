OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_standard.py --retrieval_m_max=16 --max_iters=3000 --learning_rate=3e-4 --device=cpu --out_dir=out/sweeps/mmax_standard_lr3e-4_3000steps_16
