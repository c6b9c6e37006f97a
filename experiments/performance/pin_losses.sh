#!/bin/bash
# Six steps of every variant through train.py on a tiny retrieval task, in float32, bfloat16 and float64 (and
# compiled, and with micro-batches), each run's logs and a SHA-256 of its final weights in OUT/<run>/: run it on
# two checkouts and compare (results/performance/core_split/).
#   bash experiments/performance/pin_losses.sh REPO_ROOT OUT
set -u
ROOT=$1; OUT=$(realpath -m "$2"); mkdir -p "$OUT"
TINY="--task=retrieval --retrieval_vocab_size=32 --retrieval_m_max=4 --n_test=200 --n_layer=2 --n_head=2 --n_embd=32
      --batch_size=16 --eval_interval=3 --log_interval=1 --eval_iters=2 --device=cpu --warmup_iters=2
      --learning_rate=3e-3 --max_iters=6"
cd "$ROOT"
export OMP_NUM_THREADS=1 XDG_CACHE_HOME="$OUT/cache"
run() {
    name=$1; shift
    python train.py $TINY --out_dir="$OUT/$name" --overwrite=True "$@" > "$OUT/$name.out" 2>&1 || { echo "FAIL $name"; return; }
    python -c "import torch, hashlib; sd = torch.load('$OUT/$name/ckpt.pt', map_location='cpu', weights_only=True)['model']
h = hashlib.sha256()
for k in sorted(sd): h.update(k.encode() + sd[k].contiguous().view(-1).view(torch.uint8).numpy().tobytes())
print(h.hexdigest())" > "$OUT/$name/weights.sha"
}
for v in standard frozen_qk frozen_mlp mixit random universal; do
    for dt in float32 bfloat16 float64; do run ${v}_$dt --variant=$v --dtype=$dt --compile=False; done
done
run standard_float32_compiled --variant=standard --dtype=float32 --compile=True
run mixit_bf16_compiled --variant=mixit --dtype=bfloat16 --compile=True
run standard_float32_mb4 --variant=standard --dtype=float32 --compile=False --micro_batch_size=4
