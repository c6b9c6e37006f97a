#!/usr/bin/env bash
# The authors' code for paper 1 (princeton-pli/MixiT) at the commit read for this repository, fetched outside it,
# and an environment it runs in: their modeling_llama.py imports transformers internals of its time (>= 4.50;
# 4.53 and later read the attention's is_causal flag, 5.x removed modules it imports).
#   bash experiments/paper1/authors/fetch.sh [DIR]    # DIR: where to put it (default out/authors)
#   MIXIT_AUTHORS_DIR=DIR/MixiT DIR/venv/bin/python -m pytest -q tests/test_authors.py
#   bash experiments/paper1/authors/run.sh DIR/MixiT DIR/venv/bin/python    # their trainers at our CPU size
#                                                                           #   (results/paper1/authors/README.md)
set -euo pipefail
COMMIT=22ce0299a96881d50734be22a5d63ca21894cd0d
DIR=${1:-out/authors}
mkdir -p "$DIR"
if [ ! -d "$DIR/MixiT/.git" ]; then
    git clone -q https://github.com/princeton-pli/MixiT "$DIR/MixiT"
fi
git -C "$DIR/MixiT" checkout -q "$COMMIT"
if [ ! -x "$DIR/venv/bin/python" ]; then
    python3 -m venv "$DIR/venv"
    # accelerate, datasets, matplotlib, scikit-learn, wandb: imported by their trainers (run.sh); huggingface_hub
    # < 1.0 for this transformers (the side-by-side runs used accelerate 1.15.0, datasets 4.2.0, huggingface_hub
    # 0.36.2, matplotlib 3.11.2, wandb 0.31.0, torch 2.13.0+cpu; README.md has the later runs' versions)
    "$DIR/venv/bin/pip" install -q torch numpy pytest tiktoken tqdm "transformers==4.52.4" "huggingface_hub<1.0" \
        accelerate "datasets<4.3" matplotlib scikit-learn wandb
fi
echo "their code: $DIR/MixiT at $COMMIT; its python: $DIR/venv/bin/python"
