# Fineweb-edu language modeling (paper 1, Tables 2 and 9), variant frozen_qk.
# torchrun --standalone --nproc_per_node=8 train.py config/fineweb_frozen_qk.py

include('fineweb.py')
variant = 'frozen_qk'
out_dir = 'out/fineweb_frozen_qk'
