OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_frozen_qk.py --retrieval_m_max=32 --max_iters=3000 --seed=2 --device=cpu --out_dir=out/sweeps/mmax_frozen_qk_seed2_3000steps_32
