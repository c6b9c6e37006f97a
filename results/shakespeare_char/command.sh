# CPU: AMD EPYC (lscpu), one thread, 3 min 39 s of CPU time (the process shared 2 cores with other jobs). Data:
#   python tasks.py prepare shakespeare_char --input=path/to/tinyshakespeare/input.txt
OMP_NUM_THREADS=1 python train.py config/cpu/shakespeare_char.py
OMP_NUM_THREADS=1 python sample.py --out_dir=out/cpu/shakespeare_char --start="ROMEO:" --max_new_tokens=300 --num_samples=2 > results/shakespeare_char/sample.txt
