# Paper 3, Fig. 2c/d (App. G): hidden Markov chain task, L=2 x H=2 designed heads, P=100, tau=0.01, all four paths.
# python -m experiments.paper3 hmc config/hmc.py            (Fig. 2e: add --two_paths=True --sigma_perp=5.0)
T = 30
N0_feat = 200
P = 100
P_test = 1000
tau = 0.01
beta = 10.0
sigma_par = 1.0
sigma_perp = 1.0
widths = (10, 30, 50, 100, 300, 500, 1000)
out_dir = 'out/paths'
