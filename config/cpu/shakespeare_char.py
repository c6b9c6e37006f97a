# Character-level Tiny Shakespeare, nanoGPT's first language model, at laptop size: no tokenizer, no download
# beyond the 1.1 MB text. Data (65 characters; the last 10% is the test text):
#   python tasks.py prepare shakespeare_char                         # downloads input.txt into data/shakespeare_char
#   python tasks.py prepare shakespeare_char --input=path/to/input.txt          # offline, from a local copy
# python train.py config/cpu/shakespeare_char.py
# python sample.py --out_dir=out/cpu/shakespeare_char --start="ROMEO:" --max_new_tokens=300
# --variant=mixit trains the same model with MixiT's static random attention.
out_dir = 'out/cpu/shakespeare_char'
task = 'lm'
lm_data_dir = 'data/shakespeare_char'
block_size = 64
n_test = 400                    # the first 400 test windows (25,600 characters) per evaluation
variant = 'standard'
n_layer = 4
n_embd = 128
n_head = 4
batch_size = 16
max_iters = 2000
learning_rate = 2e-3
warmup_iters = 100
beta2 = 0.99
eval_interval = 250
eval_iters = 4
log_interval = 50
device = 'cpu'
compile = False
