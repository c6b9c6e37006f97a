# README's character-level run on a fresh clone; CPU: AMD EPYC, 2 cores (lscpu), one thread, the other core busy
# with another job part of the time: 328.0 s wall-clock, 316.2 s user CPU time (/usr/bin/time); test loss 1.6186
python tasks.py prepare shakespeare_char --input=path/to/tinyshakespeare/input.txt
OMP_NUM_THREADS=1 python train.py config/cpu/shakespeare_char.py
