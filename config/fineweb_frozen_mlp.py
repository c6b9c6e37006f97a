# Fineweb-edu language modeling (paper 1, Tables 2 and 9), variant frozen_mlp.
# torchrun --standalone --nproc_per_node=8 train.py config/fineweb_frozen_mlp.py

include('fineweb.py')
variant = 'frozen_mlp'
out_dir = 'out/fineweb_frozen_mlp'
