#!/usr/bin/env bash
# The authors' code for paper 1 (princeton-pli/MixiT) at the commit read for this repository, fetched outside it,
# and an environment it runs in: their modeling_llama.py imports transformers internals of its time (>= 4.50;
# 4.53 and later read the attention's is_causal flag, 5.x removed modules it imports).
#   bash results/paper1/authors/fetch.sh [DIR]        # DIR: where to put it (default out/authors)
#   MIXIT_AUTHORS_DIR=DIR/MixiT DIR/venv/bin/python -m pytest -q tests/test_authors.py
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
    "$DIR/venv/bin/pip" install -q torch numpy pytest tiktoken tqdm "transformers==4.52.4"
fi
echo "their code: $DIR/MixiT at $COMMIT; its python: $DIR/venv/bin/python"
