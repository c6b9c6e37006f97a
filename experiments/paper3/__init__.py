"""Paper 3's experiments (paths.py); `python -m experiments.paper3 CMD` runs one."""
