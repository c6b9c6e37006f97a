#!/usr/bin/env bash
# The papers' claims at their own sizes, on one GPU (a bare machine with torch, tiktoken, tqdm; no `datasets`,
# no network). From the repository root, one stage per call; a stage's runs share the GPU side by side, each
# under the stage's wall-clock budget TIME_S (default 480 s), so that a stage ends inside a 10-minute call:
#
#   bash experiments/gpu/paper.sh sentiment     # paper 1, Tables 3, 9: whole IMDb reviews at the authors' Yelp command
#                                               #   (4 x 1024, 16 heads, 256 tokens, 3,000 steps), 4 variants x 2 seeds
#   bash experiments/gpu/paper.sh depth         # Table 5: MixiT and the random transformer at 2, 4, 8 layers (LAYERS),
#                                               #   and both in the depth-scaled block (<variant>_depthscaled)
#   bash experiments/gpu/paper.sh depth16       # Table 5: the same at 16 layers
#   bash experiments/gpu/paper.sh addition      # Tables 3, 10, 11: 10-digit addition, 4 variants; MixiT with 256 heads
#   bash experiments/gpu/paper.sh memorization  # Table 4: 512^2 pairs, 4 variants, the paper's 10,000 steps
#   bash experiments/gpu/paper.sh khop          # Table 1: k ~ U{0..16}, 98 characters; standard, Frozen-QK x 2 seeds
#   bash experiments/gpu/paper.sh khop_qk       # Table 1's Frozen-QK at Table 7's other settings, a run each: the
#                                               #   frozen W_Q, W_K at width 1024's score scale (qk_init_std 0.028),
#                                               #   lr 5e-4, width 1024 (runs khop_frozen_qk_<setting>_<seed>)
#   bash experiments/gpu/paper.sh dyck1         # Tables 3, 10, 11: Dyck-1 of length 40, 4 x 512, 64 heads, 20,000
#                                               #   steps, 4 variants; MixiT with 256 heads
#   bash experiments/gpu/paper.sh modular       # Tables 3, 10: modular addition, p = 599 (the paper's split), 2 x 512,
#                                               #   20,000 steps, 4 variants
#   bash experiments/gpu/paper.sh retrieval     # Table 1: V = 256, m_max = 30, 2 x 1024, batch 1,024, lr 1e-4; 4
#                                               #   variants, RETRIEVAL_ITERS (default 3,000) of the configs' 20,000
#                                               #   steps; Fig. 2: MMAX="10 20 40" (m_max <= 128; runs
#                                               #   retrieval_<v>_mmax<m>_*)
#   bash experiments/gpu/paper.sh universal_a   # paper 2, Table 1: Dyck-1 attention-only; 2-hop + residual and LN
#   bash experiments/gpu/paper.sh universal_b   # paper 2, Table 1: 3-hop + residual and LN
#   bash experiments/gpu/paper.sh universal_c   # paper 2, Table 1: 4-hop + residual and LN
#   bash experiments/gpu/paper.sh universal_d   # paper 2, Table 1: Dyck-1 and 1-hop + residual and LN
#   bash experiments/gpu/paper.sh universal_e   # paper 2, Table 1: 1- and 2-hop attention-only
#   bash experiments/gpu/paper.sh universal_f   # paper 2, Table 1: 3- and 4-hop attention-only
#   bash experiments/gpu/paper.sh universal_khop2  # paper 2, 2-hop + residual and LN, the routed sparse
#                                               #   construction, seeds 0-2 (runs khop2_res_ln_sparse_seed<k>)
#   bash experiments/gpu/paper.sh appf          # paper 2, App. F: 3- and 4-hop + MLP, + MLP and LN at the CPU size
#                                               #   (ARCHS, JOBS: which rows, how many runs at a time)
#   bash experiments/gpu/paper.sh lm            # Tables 2, 9: the four variants at 12 x 512 on data/gpu_lm, in the
#                                               #   configs' blocks and in the authors' depth-scaled block, as their
#                                               #   Slurm LM runner trains them (<variant>_depthscaled)
#   bash experiments/gpu/paper.sh covariance    # Table 6: random, MixiT, MixiT without its sink head, and MixiT and
#                                               #   random in the authors' depth-scaled block (their Slurm LM runner's)
#                                               #   as language models at Table 8's shape on data/gpu_lm, 2 to 32
#                                               #   layers (LAYERS), LM_ITERS steps each; then each model's token
#                                               #   covariance, trained and at initialisation (sde.py covariance on the
#                                               #   GPU: covariance.json)
#
# Data that travels (carry it): data/imdb for sentiment (python tasks.py prepare imdb --task=sentiment
# --input=<IMDb CSVs> --tokenizer=<gpt2.tiktoken>), data/gpu_lm for lm and covariance (bash experiments/gpu/run.sh
# data).
# Every run writes LOGS/<paper>/paper/<run>/ (LOGS: out/gpu/paper/<stage>): command.sh (the exact command),
# log.jsonl (as the run goes), stdout.txt, machine.txt (GPU, torch) and exit_code (124: stopped by the budget,
# its last evaluation kept; a run whose stdout.txt has train.py's "final" line made all its steps before
# the signal, and counts as finished); where $OUT is set (the device tool's output folder) they are packed into
# $OUT/<stage>.tar.gz as each run ends. Unpack with `tar -xzf <stage>.tar.gz -C results/`: paper-1 runs land in
# results/paper1/paper/<run>/, paper-2 runs in results/paper2/paper/<run>/ (the paper-size runs), appf's in
# results/paper2/<run>_cuda/ beside the CPU-size runs (`python universal.py table --which=table2
# --tasks=khop3,khop4 --flags=--device=cuda --tag=cuda` reads them).
# The same stage again on the same machine (a second call while it is still held) continues the runs the budget
# stopped from their checkpoints and leaves the finished ones, so a stage can span several calls. On any machine, a
# run whose finished log is committed under DONE (default results/: results/<paper>/paper/<run>/, made by the same
# command, its --out_dir aside) is not made again. A run the budget stopped can also continue on another machine:
# where $OUT is set, its out_dir's checkpoint and logs come back as $OUT/run_<run>.tar.gz when that holds at most
# CARRY_MB MiB (default 16, what one file of $OUT may hold: memorization's runs fit, about 9 MB each, and so do the
# models that train a small part of themselves, whose paper-size configs keep only the trained weights in ckpt.pt
# (checkpoint_frozen=False: the random transformer of depth and depth16, paper 2's sparse and random models); the
# other large models' do not); with the stage's archive of that call committed, `tar -xzf run_<run>.tar.gz -C
# out/gpu/paper/runs` and carry out/gpu/paper/runs (RUNS): a train.py stage continues the run whose committed
# log.jsonl is the carried one (RUNS/<run>), a universal stage the run whose carried out dir
# (RUNS/<stage>/paper/<run>) holds its command. $OUT brings back OUT_FILES files at most (default 8), so the stage
# archives come first: each stage writes its archive when it starts, and a run archive is written only while $OUT
# holds fewer than OUT_FILES files, every stage's and the caller's own counted (set OUT_FILES lower to keep room
# for files written into $OUT after the stages end); a run left out says so on stderr.
#
# Steps are the papers' where a run fits the budget beside its stage's others, and cut where it cannot: the depth runs
# make DEPTH_ITERS (default 4,000) of the authors' 40,000 steps of 1,000 sums (a run with fewer is named
# depth_<variant>_<layers>_<DEPTH_ITERS>steps, with all 40,000 depth_<variant>_<layers>), retrieval RETRIEVAL_ITERS
# (default 3,000; retrieval_<variant>_<RETRIEVAL_ITERS>steps, all 20,000 retrieval_<variant>), each on its own
# schedule (warm-up and decay within its steps); lm and covariance make LM_ITERS (default 1,500) steps of 64 x 256
# tokens; paper 2's 3- and 4-hop runs (60,000 steps) stop where the budget stops them. Configs' micro-batches are for
# 8 GPUs: on one, every stage runs the global batch in one pass (the same batch; no accumulation).
# MPS=1 runs the stage's runs through CUDA MPS (experiments/gpu/common.sh: their kernels at the same time rather
# than in turns; experiments/gpu/sharing.sh measures what each way costs), falling back to time slices where it does
# not start. It starts a control daemon, or uses the one running, and leaves it running for the later calls on
# the machine and the stages beside it (any run goes through a running daemon); machine.txt says whether one ran.
# JOBS: how many runs at a time (default: all of a stage's train.py runs, each with its own TIME_S, so that the
# stage takes up to TIME_S times the runs over JOBS, rounded up; paper 2's universal.py calls: 3 per row, 6 for
# appf, all within TIME_S; universal_khop2's: JOBS calls of one run at a time, each with its own TIME_S).
# The runs' out_dirs (checkpoints) are RUNS/<run> (RUNS: out/gpu/paper/runs; paper 2's RUNS/<stage>/).
# DRY=1 makes nothing: it prints each train.py run's name, whether it would run, continue or is finished, and its
# command (the universal stages: their universal.py commands), to see what a call would do before making it.
# DEVICE (default cuda) and EXTRA (flags appended to every train.py run) make a CPU rehearsal of the logic:
#   DEVICE=cpu TIME_S=60 EXTRA="--max_iters=4 --eval_interval=2 --n_layer=1 --n_embd=32 --n_head=2 --batch_size=8
#   --micro_batch_size=8 --n_test=16 --compile=False --dtype=float32" bash experiments/gpu/paper.sh khop
# (the universal stages take UFLAGS: universal.py experiments' --flags, which tag the run names; ROWS picks some of a
# universal_<letter> stage's rows, task:arch, e.g. ROWS=dyck1:attn bash experiments/gpu/paper.sh universal_a, and
# MODELS some of its models, e.g. MODELS="sparse random": those whose checkpoints can travel to another machine).
# VARIANTS chooses a subset of a train.py stage's variants (one the stage lacks is an error; addition's and dyck1's
# MixiT with 256 heads is mixit_256; khop_qk's settings std0.028, lr5e-4, width1024), SEEDS of its seeds (sentiment, khop, khop_qk, universal_khop2), LAYERS the depths of
# depth, depth16 and covariance, MMAX retrieval's m_max values (whole numbers, each an error on the other stages),
# e.g. SEEDS=1 VARIANTS="standard mixit", LAYERS=2 VARIANTS=mixit DEPTH_ITERS=40000 (the authors' whole
# schedule). TAG (letters, digits, '.', '_', '-') ends every train.py run's name, so that runs that EXTRA changes land
# beside the stage's own when unpacked rather than over them, e.g. TAG=_20000steps EXTRA="--max_iters=20000" bash
# experiments/gpu/paper.sh memorization, or TAG=_seed2 EXTRA=--seed=2 for another seed of a stage without SEEDS.
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/gpu/common.sh
STAGES="sentiment depth depth16 addition memorization khop khop_qk dyck1 modular retrieval"
STAGES+=" universal_a universal_b universal_c universal_d universal_e universal_f universal_khop2 appf lm covariance"
stage=${1:-}
if [[ " $STAGES " != *" $stage "* ]]; then
    echo "error: name a stage: ${STAGES// /, } (got '$stage')" >&2
    exit 2
fi
declare -A VARIANTS_OF=(   # each train.py stage's variants (khop_qk: settings), in the order its runs start
    [sentiment]="standard mixit frozen_qk frozen_mlp" [depth]="mixit random mixit_depthscaled random_depthscaled"
    [depth16]="mixit random mixit_depthscaled random_depthscaled"
    [addition]="standard frozen_qk frozen_mlp mixit mixit_256" [memorization]="standard frozen_qk frozen_mlp mixit"
    [khop]="standard frozen_qk" [khop_qk]="std0.028 lr5e-4 width1024"
    [dyck1]="standard frozen_qk frozen_mlp mixit mixit_256" [modular]="standard frozen_qk frozen_mlp mixit"
    [retrieval]="standard frozen_qk frozen_mlp mixit" [lm]="standard frozen_qk frozen_mlp mixit"
    [covariance]="random mixit mixit_nosink mixit_depthscaled random_depthscaled")
VARIANTS_OF[lm]+=" standard_depthscaled frozen_qk_depthscaled frozen_mlp_depthscaled mixit_depthscaled"
all=${VARIANTS_OF[$stage]:-}
if [ -n "${VARIANTS:-}" ] && [ -z "$all" ]; then
    echo "error: $stage takes no VARIANTS (got '$VARIANTS')" >&2
    exit 2
fi
VARIANTS=${VARIANTS:-$all}
for v in $VARIANTS; do
    if [[ " $all " != *" $v "* ]]; then
        echo "error: $stage's VARIANTS are ${all// /, } (got '$v')" >&2
        exit 2
    fi
done
declare -A TAKES=([SEEDS]="sentiment khop khop_qk universal_khop2" [LAYERS]="depth depth16 covariance"
                   [MMAX]=retrieval)
for name in SEEDS LAYERS MMAX; do   # lists of whole numbers, each read by the stages TAKES names
    if [ -n "${!name:-}" ] && [[ " ${TAKES[$name]} " != *" $stage "* ]]; then
        hint=
        if [ $name = SEEDS ]; then hint="; TAG=_seed2 EXTRA=--seed=2 makes a run with seed 2"; fi
        echo "error: $stage takes no $name (got '${!name}'$hint)" >&2
        exit 2
    fi
    for v in ${!name:-}; do
        if ! [[ $v =~ ^[0-9]+$ ]]; then
            echo "error: $name: whole numbers only (got '$v')" >&2
            exit 2
        fi
    done
done
declare -A ROWS_OF=(   # paper 2, Table 1's ten rows (task:architecture), at most two per stage
    [universal_a]="dyck1:attn khop2:res_ln" [universal_b]=khop3:res_ln [universal_c]=khop4:res_ln
    [universal_d]="dyck1:res_ln khop1:res_ln" [universal_e]="khop1:attn khop2:attn"
    [universal_f]="khop3:attn khop4:attn")
if [ -n "${ROWS:-}" ] && [ -z "${ROWS_OF[$stage]:-}" ]; then
    echo "error: $stage takes no ROWS (got '$ROWS')" >&2
    exit 2
fi
if [ -n "${MODELS:-}" ] && [ -z "${ROWS_OF[$stage]:-}" ]; then
    echo "error: $stage takes no MODELS (got '$MODELS')" >&2
    exit 2
fi
for m in ${MODELS:-}; do
    if [[ " sparse random full " != *" $m "* ]]; then
        echo "error: MODELS are sparse, random, full (got '$m')" >&2
        exit 2
    fi
done
for row in ${ROWS:-}; do
    if [[ " ${ROWS_OF[$stage]} " != *" $row "* ]]; then
        echo "error: $stage's ROWS are ${ROWS_OF[$stage]// /, } (got '$row')" >&2
        exit 2
    fi
done
TIME_S=${TIME_S:-480}
DEPTH_ITERS=${DEPTH_ITERS:-4000}
RETRIEVAL_ITERS=${RETRIEVAL_ITERS:-3000}
LM_ITERS=${LM_ITERS:-1500}
CARRY_MB=${CARRY_MB:-16}
OUT_FILES=${OUT_FILES:-8}
require_counts TIME_S DEPTH_ITERS RETRIEVAL_ITERS LM_ITERS CARRY_MB OUT_FILES
MPS=${MPS:-0}
DRY=${DRY:-0}
for name in MPS DRY; do
    if [ "${!name}" != 0 ] && [ "${!name}" != 1 ]; then
        echo "error: $name is 0 or 1 (got '${!name}')" >&2
        exit 2
    fi
done
if [ -n "${JOBS:-}" ]; then
    require_counts JOBS
fi
TAG=${TAG:-}
if ! [[ $TAG =~ ^[A-Za-z0-9._-]*$ ]]; then
    echo "error: TAG may hold letters, digits, '.', '_' and '-' only (got '$TAG')" >&2
    exit 2
fi
if [ -n "$TAG" ] && [[ $stage == universal_* || $stage == appf ]]; then
    echo "error: TAG names train.py runs; $stage's universal.py runs are named by UFLAGS" >&2
    exit 2
fi
LOGS=${LOGS:-out/gpu/paper/$stage}
DEVICE=${DEVICE:-cuda}
RUNS=${RUNS:-out/gpu/paper/runs}
DONE=${DONE:-results}
UNIVERSAL=$RUNS/$stage
MACHINE=$LOGS/machine.txt
if [ "$DRY" = 0 ]; then
    mkdir -p "$LOGS"
    describe_machine > "$MACHINE"
    if [ "$MPS" = 1 ]; then
        mps_start out/gpu/paper/mps || true
    fi
    if mps_running; then
        echo "CUDA MPS: on" >> "$MACHINE"
        if [ "$MPS" = 0 ]; then
            echo "note: a CUDA MPS daemon is running; the runs go through it (echo quit | nvidia-cuda-mps-control)" >&2
        fi
    else
        echo "CUDA MPS: off" >> "$MACHINE"
    fi
fi

pack() {   # the stage's run folders so far into $OUT/<stage>.tar.gz (one packer at a time, its tar and mv both
           # under the lock, so that a run's packing never moves another's half-written archive)
    if [ -n "${OUT:-}" ] && [ "$DRY" = 0 ]; then
        mkdir -p "$OUT"
        (
            flock 9
            tar -czf "$OUT/$stage.tar.gz.tmp" -C "$LOGS" $(cd "$LOGS" && ls -d paper?) &&
                mv "$OUT/$stage.tar.gz.tmp" "$OUT/$stage.tar.gz"
        ) 9> "$LOGS/.pack"
    fi
}

same_command() {   # same_command DIR LINE: DIR's run was made by the command line LINE, its --out_dir aside (where
                   # its checkpoints went: a run renamed after it was made is the same run)
    local drop='s/ --out_dir=\([^ \\]\|\\.\)*//'
    [ "$(head -n 1 "$1/command.sh" 2>/dev/null | sed "$drop")" = "$(sed "$drop" <<< "$2")" ]
}

finished() {   # finished DIR: the run in DIR made all its steps: it exited 0, or the budget's SIGTERM came after
               # its last step (exit code 124 beside train.py's closing "final (...)" line in its stdout.txt)
    [ "$(cat "$1/exit_code" 2>/dev/null)" = 0 ] || grep -q '^final (' "$1/stdout.txt" 2>/dev/null
}

stopped() {   # stopped DIR LINE OUT: DIR holds a run of command LINE that the budget stopped (exit code 124, not
              # finished), and out_dir OUT holds its checkpoint: a ckpt.pt beside the very log.jsonl DIR keeps
    same_command "$1" "$2" && [ "$(cat "$1/exit_code" 2>/dev/null)" = 124 ] &&
        ! finished "$1" && [ -f "$3/ckpt.pt" ] && cmp -s "$1/log.jsonl" "$3/log.jsonl"
}

pack_run() {   # pack_run NAME OUT: a stopped run's out_dir OUT under RUNS (its ckpt.pt and logs; a universal.py
               # run's command.sh, stdout.txt and CPU seconds too) into $OUT/run_NAME.tar.gz, its paths those under
               # RUNS, kept where it is at most CARRY_MB MiB and $OUT holds fewer than OUT_FILES files, so that
               # another machine can continue the run (one packer at a time across stages: RUNS/.out.lock)
    if [ -z "${OUT:-}" ]; then return; fi
    mkdir -p "$RUNS" "$OUT"
    (
        flock 8
        local held
        held=$(find "$OUT" -type f ! -name '*.tmp' | wc -l)
        if [ "$held" -ge "$OUT_FILES" ]; then
            echo "note: $1: \$OUT holds $held files, OUT_FILES=$OUT_FILES; its out_dir is not packed, and it" \
                "continues on this machine only" >&2
            return
        fi
        pack_run_locked "$@"
    ) 8> "$RUNS/.out.lock"
}

pack_run_locked() {   # pack_run's archive, once it holds the lock and $OUT has room
    local file=$OUT/run_$1.tar.gz limit=$((CARRY_MB * 1048576)) size f files=() dir=${2#"$RUNS"/}
    size=$(stat -c %s "$2/ckpt.pt")
    if [ "$size" -le $((2 * limit)) ]; then   # gzip shrinks weights little: pack only a checkpoint that may fit
        for f in ckpt.pt log.jsonl train_log.jsonl command.sh stdout.txt cpu_s.txt; do
            if [ -f "$2/$f" ]; then files+=("$dir/$f"); fi
        done
        tar -czf "$file.tmp" -C "$RUNS" "${files[@]}"
        size=$(stat -c %s "$file.tmp")
        if [ "$size" -le "$limit" ]; then
            mv "$file.tmp" "$file"
            return
        fi
        rm "$file.tmp"
    fi
    echo "note: $1: its checkpoint packs into $((size / 1048576)) MiB or more, over CARRY_MB=$CARRY_MB; it" \
        "continues on this machine only" >&2
}

run() {   # run PAPER NAME CONFIG [flags...]: one train.py run in the background, stopped (SIGTERM) at TIME_S. A
          # run finished by the same command (under DONE, or on this machine by an earlier call) is left as it is;
          # one the budget stopped continues from its checkpoint (train.py --init_from=resume; its log and stdout
          # go on): stopped on this machine, or elsewhere, its log committed under DONE and its out_dir (pack_run's
          # archive) unpacked into RUNS. The covariance stage then measures the model the run reached (sde.py
          # covariance).
    local name=$2$TAG
    local res=$LOGS/$1/paper/$name out=$RUNS/$name done=$DONE/$1/paper/$name; shift 2
    local cmd=(python train.py "$@" --device="$DEVICE" --out_dir="$out" --overwrite=True ${EXTRA:-})
    local line go=("${cmd[@]}") append= dir
    line=$(command_line "${cmd[@]}")
    for dir in "$done" "$res"; do
        if same_command "$dir" "$line" && finished "$dir"; then
            echo "$name: finished, in $dir"
            return
        fi
    done
    for dir in "$res" "$done"; do   # stopped by a budget on this machine, or elsewhere with its out_dir carried here
        if stopped "$dir" "$line" "$out"; then
            go=("${cmd[@]/--overwrite=True/--init_from=resume}") append=$dir
            break
        fi
    done
    if [ "$DRY" = 1 ]; then
        echo "$name: $([ -n "$append" ] && echo continues || echo runs): $line"
        return
    fi
    while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-1000}" ]; do   # JOBS runs at a time: wait for one to end
        wait -n || true
    done
    mkdir -p "$res"
    if [ -n "$append" ] && [ "$append" != "$res" ]; then   # the committed run's output so far, to go on from
        cp "$append/stdout.txt" "$res/stdout.txt"
    fi
    cp "$MACHINE" "$res/"
    echo "$line" > "$res/command.sh"
    (
        set +e
        if [ -n "$append" ]; then exec 3>> "$res/stdout.txt"; else exec 3> "$res/stdout.txt"; fi
        timeout -k 60 "$TIME_S" "${go[@]}" >&3 2>&1
        echo $? > "$res/exit_code"
        cp "$out/log.jsonl" "$res/log.jsonl" 2>/dev/null
        if [ "$stage" = covariance ] && [ -f "$out/ckpt.pt" ]; then   # Table 6: the model it reached, measured
            local measure=(python sde.py covariance "$out/ckpt.pt" --device="$DEVICE" --save="$res/covariance.json")
            echo "$(command_line "${measure[@]}")" >> "$res/command.sh"   # command.sh's second line
            "${measure[@]}" >&3 2>&1
        fi
        if stopped "$res" "$line" "$out"; then   # what a later call, here or elsewhere, would continue
            pack_run "$name" "$out"
        fi
        pack
        echo "$name: exit $(cat "$res/exit_code"), $(tail -n 1 "$res/log.jsonl" 2>/dev/null || echo 'no log')"
    ) &
}

reuse_done() {   # the finished paper-size universal runs under DONE (a log, and no exit_code or 0) into LOGS, where
                 # universal.py reuses a run whose log and command it finds
    local dir
    if [ "$DRY" = 1 ]; then return; fi
    mkdir -p "$LOGS/paper2/paper"
    for dir in "$DONE"/paper2/paper/*/; do
        if [ -f "$dir/log.jsonl" ] && [ "$(cat "$dir/exit_code" 2>/dev/null || echo 0)" = 0 ]; then
            cp -r "$dir" "$LOGS/paper2/paper/"
        fi
    done
}

universal_py() {   # universal_py LOG ARGS...: python universal.py ARGS under the budget, its output also in LOG
    local cmd=(python universal.py "${@:2}")
    if [ "$DRY" = 1 ]; then
        echo "universal.py: $(command_line "${cmd[@]}")"
        return
    fi
    timeout -k 60 "$TIME_S" "${cmd[@]}" 2>&1 | tee "$1" || true
}

universal() {   # universal TASKS ARCHS JOBS: universal.py experiments --size=paper for those rows, seed 0 (MODELS of
                # its models)
    universal_py "$LOGS/universal_$1_$2.txt" experiments --which=table1 --size=paper --seeds=0 --tasks="$1" \
        --archs="$2" ${MODELS:+--models="${MODELS// /,}"} --jobs="$3" --out=$UNIVERSAL \
        --results="$LOGS/paper2/paper" ${UFLAGS:+--flags="$UFLAGS" --tag=rehearsal}
}

salvage() {   # salvage SIZE RESULTS: the universal runs of out dir $UNIVERSAL/SIZE into LOGS/RESULTS/<run>. One
              # the budget stopped: its log so far, command, stdout and exit code 124, its out dir packed for
              # another machine (pack_run); one finished (universal.py wrote its log, after any stopped part's
              # salvage): its stdout and exit code 0 beside it, over a stopped part's leftovers
    local dir res
    if [ "$DRY" = 1 ]; then return; fi
    for dir in "$UNIVERSAL/$1"/*/; do
        res=$LOGS/$2/$(basename "$dir")
        if [ -f "$res/log.jsonl" ] && { [ "$(cat "$res/exit_code" 2>/dev/null || echo 0)" = 0 ] ||
                                        [ "$res/log.jsonl" -nt "$res/exit_code" ]; }; then
            if [ -f "$dir/stdout.txt" ]; then cp "$dir/stdout.txt" "$res/"; fi
            echo 0 > "$res/exit_code"
        elif [ -f "$dir/log.jsonl" ]; then
            mkdir -p "$res"
            cp "$dir/log.jsonl" "$dir/stdout.txt" "$dir/command.sh" "$res/"
            echo 124 > "$res/exit_code"
            if [ -f "$dir/ckpt.pt" ]; then pack_run "$(basename "$dir")" "${dir%/}"; fi
        fi
        if [ -d "$res" ]; then cp "$MACHINE" "$res/"; fi
    done
}

if [ "$DRY" = 0 ]; then   # the stage's archive, written now so that it holds its place in $OUT (OUT_FILES)
    mkdir -p "$LOGS/$([[ $stage == universal_* || $stage == appf ]] && echo paper2 || echo paper1)"
    pack
fi

# lm's and covariance's language models: 64 x 256 tokens a step of the carried tokens, LM_ITERS steps; each
# variant's config/wikitext_<config>.py and flags
lm_steps=(--lm_data_dir=data/gpu_lm --batch_size=64 --micro_batch_size=64 --max_iters="$LM_ITERS"
          --warmup_iters=$((LM_ITERS / 20)))
declare -A lm_config=([standard]=standard [frozen_qk]=frozen_qk [frozen_mlp]=frozen_mlp [mixit]=mixit
                      [random]=standard [mixit_nosink]=mixit)
declare -A lm_flags=([random]=--variant=random [mixit_nosink]=--mixit_sink_head=False)
# <v>_depthscaled: v in the depth-scaled block of the authors' Slurm LM runner (MixiT's MLP also their LeakyReLU)
for v in standard frozen_qk frozen_mlp mixit random; do
    lm_config[${v}_depthscaled]=${lm_config[$v]}
    lm_flags[${v}_depthscaled]="${lm_flags[$v]:-} --depth_alpha=1"
    if [ "$v" = mixit ]; then lm_flags[${v}_depthscaled]+=" --activation_cminus=1"; fi
done
as_config() {   # as_config VARIANT LAYERS: VARIANT is a depth-scaled one that at LAYERS is its config's block,
    [[ $1 == *_depthscaled && $1 != mixit* && $2 == 4 ]]   # branches (4 / 4)^1 = 1 outside MixiT: not run twice
}
case $stage in
sentiment)
    for seed in ${SEEDS:-1 2}; do
        for v in $VARIANTS; do
            run paper1 "imdb_${v}_$seed" "config/yelp_$v.py" --sentiment_data_dir=data/imdb --seed=$seed
        done
    done
    ;;
depth | depth16)
    steps=$([ "$DEPTH_ITERS" = 40000 ] || echo "_${DEPTH_ITERS}steps")   # a run short of the authors' 40,000
    for n in ${LAYERS:-$([ "$stage" = depth ] && echo "2 4 8" || echo 16)}; do
        for v in $VARIANTS; do   # <v>_depthscaled: depth.py's depth_alpha (the authors' depth runner: 0) at 1
            if as_config "$v" "$n"; then continue; fi
            scaled=$([[ $v == *_depthscaled ]] && echo --depth_alpha=1 || true)
            run paper1 "depth_${v}_$n$steps" "config/table5_${v%_depthscaled}.py" --n_layer=$n --seed=1 \
                --micro_batch_size=1000 --max_iters="$DEPTH_ITERS" --eval_interval=500 $scaled
        done
    done
    ;;
addition | dyck1)   # the four variants; mixit_256: Table 11's MixiT with 256 heads
    task=$([ "$stage" = addition ] && echo decimal_addition || echo dyck1)
    micro=$([ "$stage" = addition ] && echo 128 || echo 512)
    for v in $VARIANTS; do
        if [ "$v" = mixit_256 ]; then
            run paper1 "heads_${task}_mixit_256" "config/table11_${task}_mixit.py" --n_head=256 \
                --micro_batch_size=$micro
        else
            run paper1 "${task}_$v" "config/${task}_$v.py" --micro_batch_size=$micro
        fi
    done
    ;;
memorization)
    for v in $VARIANTS; do
        run paper1 "memorization_$v" "config/memorization_$v.py" --micro_batch_size=32768
    done
    ;;
khop)
    for seed in ${SEEDS:-1 2}; do
        for v in $VARIANTS; do
            run paper1 "khop_${v}_$seed" "config/khop_$v.py" --seed=$seed --micro_batch_size=128
        done
    done
    ;;
khop_qk)   # Table 7 searched width [256, 512, 1024] and lr [1e-4, 5e-4] per architecture; the configs have MixiT's
           # choice (Table 8: 512, 1e-4)
    declare -A setting=([std0.028]=--qk_init_std=0.028    # 0.02·√(1024/512): width 1024's score spread at 512
                        [lr5e-4]=--learning_rate=5e-4 [width1024]=--n_embd=1024)
    for seed in ${SEEDS:-1}; do
        for v in $VARIANTS; do
            run paper1 "khop_frozen_qk_${v}_$seed" config/khop_frozen_qk.py --seed=$seed --micro_batch_size=128 \
                "${setting[$v]}"
        done
    done
    ;;
modular)
    for v in $VARIANTS; do
        run paper1 "modular_addition_$v" "config/modular_addition_$v.py" --micro_batch_size=256
    done
    ;;
retrieval)   # Table 1 at m_max = 30; Fig. 2 at the others (MMAX)
    steps=$([ "$RETRIEVAL_ITERS" = 20000 ] || echo "_${RETRIEVAL_ITERS}steps")   # a run short of the configs'
    every=$((RETRIEVAL_ITERS / 40 > 250 ? RETRIEVAL_ITERS / 40 : 250))   # evaluations: every 250 steps, at most 40
                                                                          # (each writes a 0.4 GB ckpt.pt)
    for m in ${MMAX:-30}; do
        for v in $VARIANTS; do
            run paper1 "retrieval_$v$([ "$m" = 30 ] || echo "_mmax$m")$steps" "config/retrieval_$v.py" \
                --retrieval_m_max="$m" --micro_batch_size=1024 --max_iters="$RETRIEVAL_ITERS" \
                --warmup_iters=$((RETRIEVAL_ITERS / 50)) --eval_interval=$every
        done
    done
    ;;
universal_?)   # paper 2, Table 1's rows, the stage's (or ROWS of them) side by side
    reuse_done
    for row in ${ROWS:-${ROWS_OF[$stage]}}; do
        if [ "$DRY" = 1 ]; then
            universal "${row%:*}" "${row#*:}" "${JOBS:-3}"
        else
            universal "${row%:*}" "${row#*:}" "${JOBS:-3}" &
        fi
    done
    wait
    salvage paper paper2/paper
    ;;
universal_khop2)   # 2-hop + residual and LN, the routed sparse construction at the paper's size (m = m̄ = 1024),
                   # SEEDS (default 0 1 2) side by side, JOBS (default 3) at a time: Table 1 (b)'s decisive cell
    reuse_done
    seeds=${SEEDS:-0 1 2}
    universal_py "$LOGS/universal_khop2.txt" experiments --which=table1 --size=paper --seeds="${seeds// /,}" \
        --tasks=khop2 --archs=res_ln --models=sparse --jobs="${JOBS:-3}" --out=$UNIVERSAL \
        --results="$LOGS/paper2/paper" ${UFLAGS:+--flags="$UFLAGS" --tag=rehearsal}
    salvage paper paper2/paper
    ;;
appf)   # App. F's 3- and 4-hop rows at the CPU size (config/cpu/), on the GPU: tagged _<DEVICE>
    universal_py "$LOGS/appf.txt" experiments --which=table2 --size=cpu --seeds=0 --tasks=khop3,khop4 \
        --archs="${ARCHS:-mlp,mlp_ln}" --jobs="${JOBS:-6}" --out=$UNIVERSAL --results="$LOGS/paper2" \
        --flags="--device=$DEVICE${UFLAGS:+,$UFLAGS}" --tag="$DEVICE${UFLAGS:+_rehearsal}"
    salvage cpu paper2
    ;;
covariance)   # Table 6 names no width or steps: Table 8's language model, as lm's runs
    for n in ${LAYERS:-2 4 8 16 32}; do
        for v in $VARIANTS; do
            if as_config "$v" "$n"; then continue; fi
            run paper1 "covariance_${v}_$n" "config/wikitext_${lm_config[$v]}.py" ${lm_flags[$v]:-} --n_layer="$n" \
                "${lm_steps[@]}" --eval_interval=250
        done
    done
    ;;
lm)
    for v in $VARIANTS; do
        run paper1 "lm_$v" "config/wikitext_${lm_config[$v]}.py" ${lm_flags[$v]:-} "${lm_steps[@]}" --eval_interval=100
    done
    ;;
esac
wait
pack
