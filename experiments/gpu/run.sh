#!/usr/bin/env bash
# The CUDA path, run for real on one GPU: a bare machine with torch, tiktoken, tqdm, matplotlib (transformers for
# the Hugging Face anchor); no `datasets`, no network. From the repository root, one stage per call (each well
# inside 10 minutes on an H100):
#
#   bash experiments/gpu/run.sh data      # on any machine with the text files: the token set the LM stages read
#   bash experiments/gpu/run.sh tests     # the test suite on CUDA (the CUDA tests run; report passed / skipped)
#   bash experiments/gpu/run.sh mixit     # config/fineweb_mixit.py under torchrun: loss falls; stop + resume: no jump;
#   bash experiments/gpu/run.sh standard  #   sample.py prints text from the GPU checkpoint (the same for standard)
#   bash experiments/gpu/run.sh ddp       # two processes sharing the GPU (gloo) against one, same global batch
#   bash experiments/gpu/run.sh bench     # bench.py, the four variants beside Hugging Face's Llama, the output layer's
#                                         #   softmax eager against compiled; a bf16 matmul
#   bash experiments/gpu/run.sh speed     # the step's speed comparisons, one call (<= 9.5 minutes): standard at the
#                                         #   fineweb shape eager (the losses' reference), compiled by default beside
#                                         #   Hugging Face's Llama (profiled), in each other compile mode, with the
#                                         #   foreach AdamW, then the fastest of these together, profiled; speed.md
#                                         #   sets each beside the default of the same call (experiments/gpu/speed.py)
#   bash experiments/gpu/run.sh all       # every stage in one call (<= 9.5 minutes): tests, mixit, standard and ddp
#                                         #   side by side, each stopped at A_S seconds (default 270), then bench alone
#                                         #   (B_S, 290)
#
# Every stage writes its logs into LOGS (default out/gpu/<stage>) and, where $OUT is set (the device tool's
# output folder), packs them into $OUT/<stage>.tar.gz. ITERS (default 120) is the LM stages' length, BATCH
# (default 512, the config's) their sequences of 2,048 tokens per step in 16-sequence micro-batches; the
# learning rate's warm-up is cut to fit; the stopped run stops at ITERS/2 and resumes to ITERS with the same
# schedule. `all` defaults to ITERS=200, BATCH=32 (65,536 tokens per step).
# speed: SPEED_FLAGS are bench.py flags after the stage's own (a shape, more --variants=...); each bench.py run
# stops at BENCH_S seconds (default 240) and the stage starts none with under 30 s left of SPEED_S (default 540); a
# CPU rehearsal of its logic:
#   DEVICE=cpu SPEED_FLAGS="--n_layer=1 --n_embd=32 --n_head=2 --block_size=32 --vocab_size=64 --batch_size=2
#   --micro_batch_size=2 --dtype=float32 --cpu_peak_n=64 --warmup=1" bash experiments/gpu/run.sh speed
# SHARED: where the raw text is (../shared/data layout: brown/brown_plain.txt.xz, wikitext-2/wiki.*.tokens,
# tokenizers/gpt2.tiktoken). EXTRA: flags added to every train.py run, e.g. a CPU rehearsal of the stages' logic:
#   DEVICE=cpu ITERS=8 MICRO=2 EXTRA="--batch_size=4 --n_layer=2 --n_embd=64 --n_head=2 --block_size=64
#   --compile=False --dtype=float32" bash experiments/gpu/run.sh mixit
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/gpu/common.sh
stage=${1:?name a stage: data, tests, mixit, standard, ddp, bench, speed or all}
LOGS=${LOGS:-out/gpu/$stage}
ITERS=${ITERS:-$([ "$stage" = all ] && echo 200 || echo 120)}
BATCH=${BATCH:-$([ "$stage" = all ] && echo 32 || echo 512)}
DEVICE=${DEVICE:-cuda}
MICRO=${MICRO:-16}
SHARED=${SHARED:-../shared/data}
DATA=data/gpu_lm
mkdir -p "$LOGS"
pack() {
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && tar -czf "$OUT/$stage.tar.gz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
    fi
}
trap pack EXIT
describe_machine > "$LOGS/machine.txt"

lm() {   # lm CONFIG OUT_DIR [flags...]: config/fineweb_*.py on the carried tokens, one process under torchrun
    local config=$1 out=$2; shift 2
    torchrun --standalone --nproc_per_node=1 train.py "$config" --lm_data_dir=$DATA --out_dir="$out" \
        --device=$DEVICE --batch_size=$BATCH --micro_batch_size=$MICRO --eval_batch_size=$MICRO --max_iters=$ITERS \
        --lr_decay_iters=$ITERS --warmup_iters=$((ITERS / 10)) --eval_interval=$((ITERS / 4)) --eval_iters=4 \
        --n_test=64 --log_interval=1 ${EXTRA:-} "$@"
}

same_losses() {   # same_losses A B FROM REL: train_log.jsonl losses of runs A and B agree from iteration FROM on,
                  # to REL, or at FROM to the drift the runs already had over the 5 iterations before it (a GPU's
                  # kernels are not bitwise deterministic: two uninterrupted bf16 runs drift apart within a few
                  # iterations)
    python - "$@" <<'EOF'
import json, sys
a, b, start, rel = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
read = lambda d: {r['iter']: r['loss'] for r in map(json.loads, open(f'{d}/train_log.jsonl'))}
la, lb = read(a), read(b)
diff = {i: abs(la[i] - lb[i]) / abs(la[i]) for i in la if i in lb}
its = sorted(i for i in diff if i >= start)
worst, first = max(diff[i] for i in its), diff[its[0]]
prev = [i for i in range(start - 5, start) if i in diff]
drift = max(diff[i] for i in prev) if prev else None
ok = worst <= rel or (drift is not None and first <= drift)
before = f"up to {drift:.2e} over iterations {prev[0]}-{prev[-1]}, then " if prev else ''
print(f"{a} vs {b}: relative loss difference {before}{first:.2e} at {its[0]}, largest {worst:.2e} over "
      f"{its[0]}-{its[-1]} ({len(its)}): {'within' if ok else 'OVER'} {rel:g}"
      f"{'' if drift is None else ' or the drift before ' + str(start)}")
sys.exit(not ok)
EOF
}

case $stage in
data)
    python tasks.py prepare gpu_lm --input="$SHARED/brown/brown_plain.txt.xz,$SHARED/wikitext-2/wiki.valid.tokens" \
        --test_input="$SHARED/wikitext-2/wiki.test.tokens" --tokenizer="$SHARED/tokenizers/gpt2.tiktoken" \
        --out_dir=$DATA 2>&1 | tee "$LOGS/prepare.txt"
    ;;
tests)   # the CUDA tests first, then the rest (6 at a time where pytest-xdist is installed), one line per test
    python -m pytest -v -rs tests/test_cuda.py 2>&1 | tee "$LOGS/pytest_cuda.txt" || true
    workers=$(python -c 'import xdist' 2>/dev/null && echo "-n 6" || true)
    python -m pytest -v -rs $workers tests --ignore=tests/test_cuda.py 2>&1 | tee "$LOGS/pytest.txt"
    ;;
mixit | standard)
    config=config/fineweb_$stage.py
    out=out/gpu/runs/$stage
    rm -rf "$out" "$out-stopped"
    lm $config "$out" 2>&1 | tee "$LOGS/train.txt"
    lm $config "$out-stopped" --max_iters=$((ITERS / 2)) 2>&1 | tee "$LOGS/train_stopped.txt"
    lm $config "$out-stopped" --init_from=resume 2>&1 | tee "$LOGS/train_resumed.txt"
    same_losses "$out" "$out-stopped" $((ITERS / 2 + 1)) 1e-5 2>&1 | tee "$LOGS/resume_check.txt" || true
    python sample.py --out_dir="$out" --device=$DEVICE --start="The history of" --num_samples=2 \
        --max_new_tokens=60 2>&1 | tee "$LOGS/sample.txt"
    cp "$out/log.jsonl" "$LOGS/log.jsonl"
    cp "$out/train_log.jsonl" "$LOGS/train_log.jsonl"
    cp "$out-stopped/train_log.jsonl" "$LOGS/train_log_resumed.jsonl"   # the stopped run, then its resumption
    ;;
ddp)
    common=(config/fineweb_standard.py --lm_data_dir=$DATA --device=$DEVICE --batch_size=32 --micro_batch_size=8
            --eval_batch_size=8 --max_iters=50 --warmup_iters=5 --eval_interval=25 --eval_iters=2 --n_test=32
            --log_interval=1 ${EXTRA:-})
    rm -rf out/gpu/runs/ddp_one out/gpu/runs/ddp_two
    torchrun --standalone --nproc_per_node=1 train.py "${common[@]}" --out_dir=out/gpu/runs/ddp_one 2>&1 |
        tee "$LOGS/one.txt"
    torchrun --standalone --nproc_per_node=2 train.py "${common[@]}" --ddp_backend=gloo \
        --out_dir=out/gpu/runs/ddp_two 2>&1 | tee "$LOGS/two.txt"
    same_losses out/gpu/runs/ddp_one out/gpu/runs/ddp_two 1 2e-2 2>&1 | tee "$LOGS/compare.txt"
    ls -l out/gpu/runs/ddp_two >> "$LOGS/compare.txt"
    ;;
bench)
    python - <<'EOF' 2>&1 | tee "$LOGS/matmul.txt"
import torch
n = 8192
a, b = (torch.randn(n, n, device='cuda', dtype=torch.bfloat16) for _ in range(2))
for _ in range(3):
    a @ b
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(20):
    a @ b
end.record()
torch.cuda.synchronize()
tflops = 2 * n ** 3 * 20 / (start.elapsed_time(end) / 1e3) / 1e12
print(f"{torch.cuda.get_device_name()}: bf16 {n}^3 matmul {tflops:.0f} TFLOP/s")
EOF
    python bench.py config/fineweb_mixit.py --device=cuda --variants=standard,frozen_qk,frozen_mlp,mixit \
        --against=hf --batch_size=16 --json_out="$LOGS/bench.json" \
        --profile="$LOGS/profile" 2>&1 | tee "$LOGS/bench.txt"
    # the output layer's softmax step eager (the six in-place passes) against compiled (HeadLoss(fused=True))
    python bench.py config/fineweb_mixit.py --device=cuda --variants=standard --batch_size=16 --fused_loss=False \
        --json_out="$LOGS/bench_eager_head.json" 2>&1 | tee "$LOGS/bench_eager_head.txt"
    rm -f "$LOGS"/profile_*.json
    ;;
speed)   # one model at a time, alone on the GPU; LOGS/<setting>.json, .txt (bench.py's console) for each setting
    shape=(config/fineweb_standard.py --device="$DEVICE" --batch_size=16 ${SPEED_FLAGS:-})
    deadline=$((SECONDS + ${SPEED_S:-540}))
    bench() {   # bench SETTING FLAGS...: one bench.py run under what is left of the budget
        local left=$((deadline - SECONDS)) limit=${BENCH_S:-240}
        if [ $left -lt 30 ]; then echo "$1: not run, ${left} s left of SPEED_S" | tee "$LOGS/$1.txt"; return; fi
        echo "$1: python bench.py ${shape[*]} ${*:2}" >&2
        timeout -k 10 $((left < limit ? left : limit)) python bench.py "${shape[@]}" "${@:2}" \
            --json_out="$LOGS/$1.json" > "$LOGS/$1.txt" 2>&1 || echo "$1: exit $? (its console: $LOGS/$1.txt)" >&2
    }
    bench eager --compile=False                  # the cheap ones first: the budget may stop the last
    bench default --against=hf --profile="$LOGS/profile_default"
    bench foreach --optimizer_impl=foreach       # the default's graphs, from inductor's cache
    bench reduce_overhead --compile_mode=reduce-overhead
    bench max_autotune_no_cudagraphs --compile_mode=max-autotune-no-cudagraphs
    bench max_autotune --compile_mode=max-autotune       # its kernels' autotuning cached by the run above
    best=$(python -m experiments.gpu.speed "$LOGS" --best) || best=
    bench best $best --profile="$LOGS/profile_best"
    python -m experiments.gpu.speed "$LOGS" | tee "$LOGS/speed.md" || true
    # the best step's trace kept (ui.perfetto.dev) where it packs small enough for $OUT; the op tables are in the
    # consoles
    rm -f "$LOGS"/profile_default_*.json "$LOGS"/profile_best_hf_llama.json
    gzip -f "$LOGS"/profile_best_*.json 2>/dev/null || true
    find "$LOGS" -name 'profile_*.json.gz' -size +12M -delete
    ;;
all)   # the GPU's memory shared by four stages: segments that grow rather than fragment
    export ITERS BATCH PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}
    for s in tests mixit standard ddp; do
        LOGS=$(dirname "$LOGS")/$s timeout -k 10 "${A_S:-270}" bash "$0" $s > "$LOGS/$s.txt" 2>&1 &
    done
    wait || true
    LOGS=$(dirname "$LOGS")/bench timeout -k 10 "${B_S:-290}" bash "$0" bench > "$LOGS/bench.txt" 2>&1 || true
    if [ -n "${OUT:-}" ]; then   # a stage its timeout stopped packs nothing itself
        for s in tests mixit standard ddp bench; do
            tar -czf "$OUT/$s.tar.gz" -C "$(dirname "$LOGS")" $s
        done
    fi
    ;;
*)
    echo "error: unknown stage $stage (data, tests, mixit, standard, ddp, bench, speed or all)" >&2
    exit 2
    ;;
esac
