# Retrieval / needle in a haystack (paper 1, Table 1 shape) at CPU scale, variant frozen_qk.
# python train.py config/cpu/retrieval_frozen_qk.py
#
# One departure from the standard init (docs/deviations.md#frozen-qk-score-scale), and why: a frozen head's scores
# at init have a scale of about qk_init_std² · n_embd (RMS-normed inputs), 0.02² · 128 = 0.05 at width 128 against
# 0.41 in the paper's width-1024 model. At 0.05 every frozen head stays uniform and the model never leaves the
# "copy some value from the context" plateau (37-39% for up to 10,500 steps at widths 128-512, and for the 500
# steps we ran at width 1024 with the standard init; see docs/paper1.md). qk_init_std = 0.02 · sqrt(1024 / 128)
# gives the frozen W_Q, W_K the paper's score scale at width 128; they are still random and never trained: 98.7% at
# step 500, 100.0% at 3,000 (about 4 minutes at one thread).

include('retrieval.py')
variant = 'frozen_qk'
qk_init_std = 0.02 * (1024 / 128) ** 0.5
max_iters = 3000
out_dir = 'out/cpu/retrieval_frozen_qk'
