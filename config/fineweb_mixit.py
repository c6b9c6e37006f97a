# Fineweb-edu language modeling (paper 1, Tables 2 and 9), variant mixit.
# torchrun --standalone --nproc_per_node=8 train.py config/fineweb_mixit.py

include('fineweb.py')
variant = 'mixit'
out_dir = 'out/fineweb_mixit'
