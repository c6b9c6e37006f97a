# Paper 3's one-shot Omniglot scale (App. H): GD model N=512, G=128, L=2 x H=4 in the authors' parametrisation
# (nn.Linear weights, PyTorch's default init), Adam 3e-4, batch 128, 10 epochs of 528k episodes = 41,250 steps x 128
# episodes, validation every 1000 steps; theory with P=600 and the paper's N and tau grids (App. H.2.1).
# python -m experiments.paper3 oneshot config/oneshot_paper.py --device=cuda
n_embd = 512
qk_dim = 128
heads = 4
layers = 2
param = 'torch'
gd_steps = 41250
gd_batch = 128
gd_lr = 3e-4
eval_every = 1000
n_eval = 4000
P = 600
widths = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
taus = (0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5)
out_dir = 'out/paths-oneshot-paper'
