python results/performance/head_chunk.py
