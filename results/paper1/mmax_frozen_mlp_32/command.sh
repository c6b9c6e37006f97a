OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_frozen_mlp.py --retrieval_m_max=32 --max_iters=1000 --device=cpu --out_dir=out/sweeps/mmax_frozen_mlp_32
