# Paper 2 §5, full size: what every universal transformer run shares (config/universal_<task>.py include it).
# Only E and U are trained unless --freeze_attn=False etc.
variant = 'universal'
weight_decay = 0.01
eval_interval = 1000
checkpoint_frozen = False       # ckpt.pt: the trained weights and the frozen ones' hashes, a few MB
                                # (docs/runs.md#checkpoints)
