python -m experiments.performance.head_chunk
