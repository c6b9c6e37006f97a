# Paper 1, Table 11: MixiT's decimal-addition accuracy against heads (4, 16, 64, 256) at width 512; the heads on
# the command line, everything else as config/decimal_addition_mixit.py (Table 8: 8 layers, lr 1e-3, batch 128).
# torchrun --standalone --nproc_per_node=8 train.py config/table11_decimal_addition_mixit.py --n_head=64
# 128 sequences/iter = 16 micro-batch x 1 accum x 8 GPUs (1 GPU: the same batch, 8x the accumulation).
# Steps: not given by the paper; 20,000 here. CPU size: experiments/paper1/sweeps.py's heads sweep.

include('decimal_addition_mixit.py')
n_head = 256
out_dir = 'out/table11_decimal_addition_mixit'
