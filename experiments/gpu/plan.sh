#!/usr/bin/env bash
# The paper-size GPU calls in order (experiments/gpu/PLAN.md: minutes, groups, where each result goes), one
# call (at most 10 minutes) on one GPU each, from the repository root:
#
#   bash experiments/gpu/plan.sh 1     # paper 1, k-hop standard / Frozen-QK x 2 seeds to 5,000 steps, and Table 7's
#                                      #   Frozen-QK at width 1024's score spread and at width 1024 (khop, khop_qk)
#   bash experiments/gpu/plan.sh 2     # the speed comparisons within SPEED_S (default 240 s; run.sh speed)
#   bash experiments/gpu/plan.sh 3     # retrieval standard, 20,000 steps; 3b continues it on the same machine
#   bash experiments/gpu/plan.sh 4     # retrieval Frozen-QK, the same; 4b
#   bash experiments/gpu/plan.sh 5     # paper 2, 2-hop + residual and LN, the routed sparse construction, seeds 0-2
#   bash experiments/gpu/plan.sh 6     # paper 2, Dyck-1 attention-only and + residual and LN to 10,000 steps, the two
#                                      #   stopped runs kept in results/gpu/h200/carry continued; 6b
#   bash experiments/gpu/plan.sh 7     # paper 1, decimal addition Frozen-QK, Frozen-MLP, MixiT 256 heads; 7b
#   bash experiments/gpu/plan.sh 8     # paper 1, Dyck-1 at 4 x 512, the four variants; 8b
#   bash experiments/gpu/plan.sh 9     # paper 1, Table 5: MixiT and random at 2, 4, 8, 16 layers, 40,000-step schedule
#   bash experiments/gpu/plan.sh 10    # the speed comparisons, whole (SPEED_S 540)
#   bash experiments/gpu/plan.sh 11    # paper 2, 3- and 4-hop + residual and LN, sparse and random (60,000 steps), the
#   bash experiments/gpu/plan.sh 12    #   runs kept in results/gpu/*/carry continued; 12: attention-only
#
# A call's paper.sh stages run side by side through CUDA MPS (on a GPU), each under its TIME_S (the call's, unless
# TIME_S is set); a <call>b continues the runs its call's budget stopped, on the same machine. Other settings pass
# to paper.sh and run.sh: DRY=1 lists the runs (and the speed stage's command), and DEVICE, EXTRA, UFLAGS, LOGS,
# RUNS, DONE rehearse a call on a CPU at tiny size, e.g.
#   DEVICE=cpu TIME_S=60 EXTRA="--max_iters=4 --eval_interval=2 --n_layer=1 --n_embd=32 --n_head=2 --batch_size=8
#   --micro_batch_size=8 --n_test=16 --compile=False --dtype=float32" bash experiments/gpu/plan.sh 1
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/gpu/common.sh
CALLS="1 2 3 3b 4 4b 5 6 6b 7 7b 8 8b 9 10 11 12"
call=${1:-}
if [[ " $CALLS " != *" $call "* ]]; then
    echo "error: name a call: ${CALLS// /, } (got '$call')" >&2
    exit 2
fi
export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True} PYTHONUNBUFFERED=1
DRY=${DRY:-0}
RUNS=${RUNS:-out/gpu/paper/runs}
stage() {   # stage SECONDS [NAME=VALUE ...] STAGE: paper.sh STAGE in the background (DRY=1: in turn), under TIME_S
            # or else SECONDS
    local seconds=$1; shift
    local go=(env TIME_S="${TIME_S:-$seconds}" "${@:1:$#-1}" bash experiments/gpu/paper.sh "${@: -1}")
    if [ "$DRY" = 1 ]; then "${go[@]}"; else "${go[@]}" & fi
}
mps() {   # the stages' runs through one CUDA MPS daemon, where there is a GPU
    if [ "$DRY" = 0 ] && [ "${DEVICE:-cuda}" != cpu ]; then mps_start out/gpu/paper/mps || true; fi
}
carried() {   # carried ARCHIVE...: the stopped runs' out dirs kept in results/, unpacked into RUNS to be continued
    local f
    if [ "$DRY" = 1 ]; then return; fi
    mkdir -p "$RUNS"
    for f in "$@"; do
        if [ -f "$f" ]; then tar -xzf "$f" -C "$RUNS"; fi
    done
}
speed() {   # speed SECONDS: run.sh speed alone on the GPU (no MPS daemon)
    if [ "$DRY" = 1 ]; then
        echo "speed: SPEED_S=${SPEED_S:-$1} bash experiments/gpu/run.sh speed"
        return
    fi
    mps_quit
    SPEED_S=${SPEED_S:-$1} bash experiments/gpu/run.sh speed
}
case $call in
1)  mps
    stage 400 khop
    stage 400 VARIANTS="std0.028 width1024" khop_qk ;;
2)  speed 240 ;;
3 | 3b | 4 | 4b)   # one run: the GPU its own
    stage "$([[ $call == *b ]] && echo 180 || echo 480)" RETRIEVAL_ITERS=20000 \
        VARIANTS="$([[ $call == 3* ]] && echo standard || echo frozen_qk)" retrieval ;;
5)  mps
    stage 480 universal_khop2 ;;
6 | 6b)
    mps
    carried results/gpu/h200/carry/run_dyck1_res_ln_*.tar.gz
    stage "$([ "$call" = 6b ] && echo 180 || echo 400)" ROWS=dyck1:attn universal_a
    stage "$([ "$call" = 6b ] && echo 180 || echo 400)" ROWS=dyck1:res_ln universal_d ;;
7 | 7b)
    mps
    stage "$([ "$call" = 7b ] && echo 180 || echo 400)" VARIANTS="frozen_qk frozen_mlp mixit_256" addition ;;
8 | 8b)
    mps
    stage "$([ "$call" = 8b ] && echo 180 || echo 400)" VARIANTS="standard frozen_qk frozen_mlp mixit" dyck1 ;;
9)  mps
    carried results/gpu/*/carry/run_depth_random_*.tar.gz
    stage 480 DEPTH_ITERS=40000 LAYERS="2 4 8 16" VARIANTS="mixit random" depth ;;
10) speed 540 ;;
11) mps
    carried results/gpu/*/carry/run_khop[34]_res_ln_*.tar.gz
    stage 480 MODELS="sparse random" universal_b
    stage 480 MODELS="sparse random" universal_c ;;
12) mps
    carried results/gpu/*/carry/run_khop[34]_attn_*.tar.gz
    stage 480 MODELS="sparse random" universal_f ;;
esac
wait
