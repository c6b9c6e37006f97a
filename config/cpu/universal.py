# Paper 2 §5, CPU size: what every universal transformer run on a CPU shares (config/cpu/universal_<task>.py
# include it). Only E and U are trained unless --freeze_attn=False etc.
variant = 'universal'
learning_rate = 1e-2
warmup_iters = 20
weight_decay = 0.01
eval_interval = 100
log_interval = 100
device = 'cpu'
dtype = 'float32'
compile = False
