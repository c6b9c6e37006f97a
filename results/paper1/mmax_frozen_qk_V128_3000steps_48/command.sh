OMP_NUM_THREADS=1 python train.py config/cpu/retrieval_frozen_qk.py --retrieval_m_max=48 --max_iters=3000 --retrieval_vocab_size=128 --device=cpu --out_dir=out/sweeps/mmax_frozen_qk_V128_3000steps_48
