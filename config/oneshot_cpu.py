# Paper 3's one-shot Omniglot run on a 2-core CPU: the paper's model (N=512, G=128, L=2 x H=4) in the authors'
# parametrisation, Adam 3e-4, batch 128, the paper's 41,250 steps (25.5 minutes on two threads; gd_max_minutes
# stops it earlier on a slower machine), the best checkpoint on validation characters; theory with P=600 and the
# paper's N and tau grids.
# OMP_NUM_THREADS=2 python -m experiments.paper3 oneshot config/oneshot_cpu.py
n_embd = 512
qk_dim = 128
heads = 4
layers = 2
param = 'torch'
gd_steps = 41250
gd_max_minutes = 29.0
gd_batch = 128
gd_lr = 3e-4
eval_every = 500
n_eval = 4000
P = 600
widths = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
taus = (0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5)
out_dir = 'results/paper3/oneshot'
save_model = 'out/paths-oneshot/gd_model.pt'
