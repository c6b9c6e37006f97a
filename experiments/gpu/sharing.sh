#!/usr/bin/env bash
# What sharing one GPU costs the paper-size runs, which experiments/gpu/paper.sh trains side by side: one train.py
# run alone; N copies of it at once, taking turns on the GPU (time slices, its default); N copies under CUDA MPS
# (experiments/gpu/common.sh: their kernels run at the same time); and the run alone drawing its own batches
# (--prefetch=0, the loop waiting for each draw). From the repository root, on a GPU machine with nothing else
# running (an MPS daemon that runs is stopped first):
#
#   bash experiments/gpu/sharing.sh            # config/memorization_standard.py as its paper-size stage runs it, N=4
#   CONFIG=config/khop_standard.py FLAGS=--micro_batch_size=128 bash experiments/gpu/sharing.sh
#
# Every run makes ITERS steps (default 300), evaluated at the first and the last only, under a wall-clock limit of
# TIME_S seconds (default 150). A run's ms/iter is the median of its train_log.jsonl records after the first, which
# holds the compilation; the copies of a mode start together and train at the same time once compiled (the later
# modes find the first one's kernels in Inductor's on-disk cache). summary.txt has each mode's ms/iter per copy and
# the steps per second of its copies together, beside the run alone's. MODES chooses the modes and their order
# (default "alone shared mps alone_prefetch0"). Logs: LOGS (default out/gpu/sharing)/<mode>/<copy>/ (command.sh,
# stdout.txt, train_log.jsonl, exit_code), machine.txt, summary.txt; packed into $OUT/sharing.tar.gz where $OUT is
# set (the device tool's output folder); the runs' out_dirs under RUNS (default out/gpu/sharing_runs). FLAGS
# (default the stage's --micro_batch_size=32768) go to every run; DEVICE and EXTRA (more flags) make a CPU
# rehearsal:
#   DEVICE=cpu ITERS=30 N=2 EXTRA="--memorization_n_keys=32 --batch_size=64 --micro_batch_size=64 --n_layer=1
#   --n_embd=32 --compile=False --dtype=float32" bash experiments/gpu/sharing.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/gpu/common.sh
CONFIG=${CONFIG:-config/memorization_standard.py}
FLAGS=${FLAGS-"--micro_batch_size=32768"}
N=${N:-4}
ITERS=${ITERS:-300}
TIME_S=${TIME_S:-150}
MODES=${MODES:-alone shared mps alone_prefetch0}
DEVICE=${DEVICE:-cuda}
LOGS=${LOGS:-out/gpu/sharing}
RUNS=${RUNS:-out/gpu/sharing_runs}
for mode in $MODES; do
    if [[ " alone shared mps alone_prefetch0 " != *" $mode "* ]]; then
        echo "error: MODES are alone, shared, mps, alone_prefetch0 (got '$mode')" >&2
        exit 2
    fi
done
require_counts N ITERS TIME_S
if [ ! -f "$CONFIG" ]; then
    echo "error: CONFIG: no file $CONFIG" >&2
    exit 2
fi
for mode in $MODES; do
    rm -rf "${LOGS:?}/$mode"        # an earlier measurement's copies
done
mkdir -p "$LOGS"
describe_machine > "$LOGS/machine.txt"

copies() {   # copies MODE K [flags...]: K copies of the run at once, each logged in LOGS/MODE/<copy>/
    local mode=$1 k=$2 i
    shift 2
    for i in $(seq 1 "$k"); do
        local dir=$LOGS/$mode/$i out=$RUNS/$mode/$i
        local cmd=(python train.py "$CONFIG" $FLAGS --max_iters="$ITERS" --eval_interval="$ITERS" --device="$DEVICE"
                   --out_dir="$out" --overwrite=True "$@" ${EXTRA:-})
        mkdir -p "$dir"
        command_line "${cmd[@]}" > "$dir/command.sh"
        (
            set +e
            timeout -k 30 "$TIME_S" "${cmd[@]}" > "$dir/stdout.txt" 2>&1
            echo $? > "$dir/exit_code"
            cp "$out/train_log.jsonl" "$dir/" 2>/dev/null
        ) &
    done
    wait
    echo "$mode: $k run(s), exit codes $(cat "$LOGS/$mode"/*/exit_code | xargs)"
}

mps_quit                      # the time-sliced modes need no daemon running
for mode in $MODES; do
    case $mode in
    alone) copies alone 1 ;;
    alone_prefetch0) copies alone_prefetch0 1 --prefetch=0 ;;
    shared) copies shared "$N" ;;
    mps)
        mkdir -p "$LOGS/mps"
        if mps_start "$LOGS/mps" 2> "$LOGS/mps/mps_start.txt"; then     # its notes: the server, or why not
            copies mps "$N"
            mps_stop
        fi
        ;;
    esac
done

python - "$LOGS" $MODES <<'EOF' | tee "$LOGS/summary.txt"
import glob, json, os, statistics, sys
logs, modes = sys.argv[1], sys.argv[2:]
read = lambda *path: open(os.path.join(logs, *path)).read().strip()
made = [mode for mode in modes if os.path.exists(os.path.join(logs, mode, '1', 'command.sh'))]
print(read('machine.txt'))
print(read(made[0], '1', 'command.sh') if made else 'no run was made')
print('\n| mode | copies | ms/iter per copy (median) | steps/s together | over alone |\n|---|---|---|---|---|')
alone = None
for mode in modes:
    if mode == 'mps' and mode not in made:                          # mps_start's last note says why
        print(f"| {mode} | 0 | not run: {read(mode, 'mps_start.txt').split('note: ')[-1]} | | |")
        continue
    ms = []
    for path in sorted(glob.glob(os.path.join(logs, mode, '*', 'train_log.jsonl'))):
        records = [r['ms'] for r in map(json.loads, open(path)) if 'ms' in r][1:]    # the first: compilation
        ms.append(statistics.median(records) if records else None)
    if not ms or None in ms:
        print(f"| {mode} | {len(ms)} | not measured (a run with fewer than two train_log records) | | |")
        continue
    steps_s = sum(1000 / m for m in ms)
    alone = steps_s if mode == 'alone' else alone
    print(f"| {mode} | {len(ms)} | {', '.join(f'{m:.1f}' for m in ms)} | {steps_s:.4g} | "
          f"{f'{steps_s / alone:.2f}x' if alone else ''} |")
EOF
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    tar -czf "$OUT/sharing.tar.gz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
fi
