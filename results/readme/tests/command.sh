# The README's test command as CI runs it (a fresh virtual environment, the CPU build of torch 2.13.0, then
# `python -m pytest -q tests`), on a fresh clone at 69a9678. CPU: AMD EPYC, 2 cores, avx512_bf16 (lscpu).
time bash .ci/run
