# Fineweb-edu language modeling (paper 1, Tables 2 and 9), variant standard.
# torchrun --standalone --nproc_per_node=8 train.py config/fineweb_standard.py

include('fineweb.py')
variant = 'standard'
out_dir = 'out/fineweb_standard'
