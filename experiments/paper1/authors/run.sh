#!/usr/bin/env bash
# The authors' own trainers (princeton-pli/MixiT at 22ce029, patched by patch.diff only to read local data, run on
# one CPU thread and write log.jsonl) at the CPU size of this repository's committed runs, for the paper-1 claims
# that do not reproduce here: same model size, data, steps, batch, learning rate and schedule, seed
# (results/paper1/authors/README.md, beside patch.diff and the runs). The *_replacement_* runs add replacement.diff
# for their length: training examples drawn with replacement, as ours.
#   bash experiments/paper1/authors/fetch.sh out/authors
#   bash experiments/paper1/authors/run.sh out/authors/MixiT out/authors/venv/bin/python [RUN ...]
# RUN: names below (default: every one, in order). From the repository root; OURPY (default python) is this
# repository's python, used only by export_imdb.py. Results: results/paper1/authors/<RUN>/{log.jsonl,command.sh,
# machine.txt}; the trainers' own output (stdout, output_dir) goes to WORK (default: next to the checkout, runs/).
set -euo pipefail
SRC=$(cd "${1:?their checkout, e.g. out/authors/MixiT}" && pwd)
PY=$(command -v "${2:?their python, e.g. out/authors/venv/bin/python}")
PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
RESULTS=$ROOT/results/paper1/authors      # patch.diff, replacement.diff and the runs' records
OURPY=${OURPY:-python}
WORK=${WORK:-$(dirname "$SRC")/runs}
mkdir -p "$WORK"

# the patch, once
if ! git -C "$SRC" apply --reverse --check "$RESULTS/patch.diff" 2>/dev/null; then
    git -C "$SRC" apply "$RESULTS/patch.diff"
fi

VERSIONS='import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
run() {   # run NAME SCRIPT ARGS...: one run of their SCRIPT, from their checkout, one thread
    local name=$1 out=$RESULTS/$1
    shift
    mkdir -p "$out" "$WORK/$name"
    lscpu | grep 'Model name' | sed 's/  */ /g' > "$out/machine.txt"
    {
        echo "# their code: princeton-pli/MixiT 22ce029 + results/paper1/authors/patch.diff$ALSO, run by run.sh $name"
        echo "# $(cat "$out/machine.txt"); $("$PY" -c "$VERSIONS")"
        echo "cd MixiT && OMP_NUM_THREADS=1 WANDB_MODE=disabled MIXIT_LOG_JSONL=log.jsonl python $(printf '%q ' "$@")"
    } > "$out/command.sh"
    echo "== $name: $(date -u +%H:%M:%S)"
    (cd "$SRC" && OMP_NUM_THREADS=1 WANDB_MODE=disabled MIXIT_LOG_JSONL="$out/log.jsonl" \
        "$PY" "$@" > "$WORK/$name/stdout.txt" 2>&1)
    echo "== $name done $(date -u +%H:%M:%S): $(tail -n 1 "$out/log.jsonl" | cut -c1-160)"
}

# ---- IMDb sentiment (Table 3's classifier on whole IMDb reviews), beside results/paper1/imdb_{mixit,standard}_1:
# config/cpu/imdb_*.py, 4 x 128, 4 heads, 256 tokens, batch 32, 300 steps, lr 2e-3 (AdamW beta2 0.999, weight decay
# 0.01), warm-up 50 then linear to 0, seed 1. The token ids are ours (export_imdb.py): <|endoftext|>, the review's first
# 255 GPT-2 tokens, right-padded to 256 with a pad of its own; test = the same 2,000 test reviews.
IMDB=$WORK/imdb_256.npz
imdb_args() {
    echo trainer_classifier.py --task=imdb_local --local_data="$IMDB" --output_dir="$WORK/$1" \
        --model_name_or_path=llama --max_seq_len=256 --n_embd=128 --n_head=4 --n_layer=4 --activation_cminus=-1 \
        --max_steps=300 --warmup_steps=50 --learning_rate=2e-3 --weight_decay=0.01 --adam_beta2=0.999 \
        --per_device_train_batch_size=32 --per_device_eval_batch_size=64 --eval_steps=100 --logging_steps=25 --seed=1 \
        --save_strategy=no --report_to=none --use_cpu=True
}
imdb() {   # imdb NAME SHAPED_ATTENTION [RUNNER: run (default) or replaced, below]
    [ -f "$IMDB" ] || (cd "$ROOT" && OMP_NUM_THREADS=1 "$OURPY" -m experiments.paper1.authors.export_imdb "$IMDB")
    # shellcheck disable=SC2046
    "${3:-run}" "$1" $(imdb_args "$1") --shaped_attention="$2"
}

# ---- Table 5 (depth) with depth.py, beside results/paper1/depth_{mixit,random}_{2,4,8} (config/cpu/table5_*.py):
# 3-digit addition, width 128, 32 heads, batch 128, 1,500 steps, lr 1e-2, weight decay 1e-3, warm-up 50 then cosine
# to 0, seed 1. depth.py counts --max_steps in passes of train_size sequences (steps = max_steps * train_size /
# batch); --train_size=128 (read by its configurator) makes --max_steps the number of steps. MixiT: mixing,
# every weight trained (weight_frozen=0, as their depth.sh); random: softmax, weight_frozen=1 (only the token
# embedding and head trained).
depth_args() {   # depth_args LAYERS
    echo depth.py --task=additionstream_3 --model_name_or_path=llama --n_embd=128 --n_head=32 --n_layer="$1" \
        --per_device_train_batch_size=128 --max_steps=1500 --train_size=128 --warmup_steps=50 --learning_rate=1e-2 \
        --weight_decay=0.001 --eval_strategy=steps --eval_steps=500 --logging_steps=100 --seed=1 --device=cpu \
        --save_strategy=no --report_to=none
}
depth() {   # depth NAME LAYERS SHAPED_ATTENTION WEIGHT_FROZEN [ARGS...]
    # shellcheck disable=SC2046
    run "$1" $(depth_args "$2") --shaped_attention="$3" --weight_frozen="$4" "${@:5}"
}

# ---- Decimal addition and Dyck-1 (Table 3) with MixiT, also through depth.py (their README runs the algorithmic
# tasks with it), beside results/paper1/decimal_addition_mixit and dyck1_mixit (config/cpu/decimal_addition_mixit.py,
# dyck1_mixit.py): 2 x 128, 128 heads, lr 3e-3, weight decay 0.1, AdamW beta2 0.95, warm-up 100 then cosine to 0.1 x
# lr, seed 1337 (train.py's defaults). additionstream_5: two 5-digit numbers; dyckstream_20: strings of at most
# 40 characters (random strings of 1-40, balanced strings of 1-20 pairs), our dyck1_max_len=40.
algo_args() {   # algo_args TASK BATCH STEPS EVAL_STEPS
    echo depth.py --task="$1" --model_name_or_path=llama --n_embd=128 --n_head=128 --n_layer=2 \
        --per_device_train_batch_size="$2" --max_steps="$3" --train_size="$2" --warmup_steps=100 --learning_rate=3e-3 \
        --weight_decay=0.1 --adam_beta2=0.95 --lr_scheduler_type=cosine_with_min_lr \
        '--lr_scheduler_kwargs={"min_lr_rate":0.1}' --eval_strategy=steps --eval_steps="$4" --logging_steps=100 \
        --seed=1337 --device=cpu --save_strategy=no --report_to=none --shaped_attention=mixing --weight_frozen=0
}

# ---- Memorization (Table 4) with hdmemorize_exp.py, beside results/paper1/memorization_<variant> (and _w12):
# config/cpu/memorization_*.py, 64^2 = 4,096 keys (hdmemorize_64_2_1.0; their script's batch is the whole set),
# 2 layers, width 16 and 4 heads (width 12 and 6 heads for _w12), lr 5e-3, weight decay 1e-4, AdamW beta2 0.95,
# warm-up 500 then cosine to 0, 1,500 steps, seed 1337. weight_frozen=0 (their default, 1, would freeze the Llama
# token embedding too); Frozen-QK / Frozen-MLP through their --freeze_attention / --freeze_mlp.
mem_args() {   # mem_args WIDTH HEADS
    echo hdmemorize_exp.py --task=hdmemorize_64_2_1.0 --model_name_or_path=llama --n_embd="$1" --n_head="$2" \
        --n_layer=2 --max_steps=1500 --warmup_steps=500 --learning_rate=5e-3 --weight_decay=1e-4 --adam_beta2=0.95 \
        --eval_strategy=steps --eval_steps=500 --logging_steps=100 --seed=1337 --device=cpu --save_strategy=no \
        --report_to=none --weight_frozen=0
}
mem() {   # mem NAME: memorization_<variant>[_w12]
    local v=${1#memorization_} size=(16 4)
    [[ $v == *_w12 ]] && size=(12 6) && v=${v%_w12}
    case $v in
        standard) set -- "$1" --shaped_attention=vanilla ;;
        frozen_qk) set -- "$1" --shaped_attention=vanilla --freeze_attention=True ;;
        frozen_mlp) set -- "$1" --shaped_attention=vanilla --freeze_mlp=True ;;
        mixit) set -- "$1" --shaped_attention=mixing ;;
    esac
    # shellcheck disable=SC2046
    run "$1" $(mem_args "${size[@]}") "${@:2}"
}

# ---- Modular addition (Tables 3, 10) with modadd_exp.py, beside results/paper1/modular_addition_{mixit,standard}
# (config/cpu/modular_addition_*.py): p = 199, every pair split 95/5 (their script's shuffle of the pairs), 2 x 128,
# batch 256 (the command line's, where their script sets 4,000), weight decay 0.1, AdamW beta2 0.95, warm-up 100 then
# cosine to 0.1 x lr, seed 1337 (the *_seed<N> runs: seed N), every weight trained (weight_frozen=0); MixiT 32
# heads, lr 1e-3, 10,000 steps; standard 8 heads, lr 3e-3, 5,000 steps. Their script evaluates its training pairs,
# then its test pairs: val_acc is the test pairs' (local_run.JsonlLog(only='testA')), the training pairs' accuracy
# is in the record's metrics.
modadd_args() {   # modadd_args HEADS LR STEPS EVAL_STEPS [SEED]
    echo modadd_exp.py --task=modadds_199 --model_name_or_path=llama --n_embd=128 --n_head="$1" --n_layer=2 \
        --per_device_train_batch_size=256 --max_steps="$3" --warmup_steps=100 --learning_rate="$2" --weight_decay=0.1 \
        --adam_beta2=0.95 --lr_scheduler_type=cosine_with_min_lr '--lr_scheduler_kwargs={"min_lr_rate":0.1}' \
        --eval_strategy=steps --eval_steps="$4" --logging_steps=100 --seed="${5:-1337}" --device=cpu \
        --save_strategy=no --report_to=none --weight_frozen=0
}

ALSO=''
replaced() {   # replaced NAME ARGS...: run with replacement.diff on top of patch.diff (their Trainers then draw the
               # training examples with replacement, as ours, not in shuffled epochs), and take it off again
    git -C "$SRC" apply "$RESULTS/replacement.diff"
    local status=0
    ALSO=' + replacement.diff'
    run "$@" || status=$?
    ALSO=''
    git -C "$SRC" apply --reverse "$RESULTS/replacement.diff"
    return $status
}

one() {
    case $1 in
        imdb_mixit_1) imdb "$1" mixing ;;
        imdb_standard_1) imdb "$1" vanilla ;;
        imdb_mixit_replacement_1) imdb "$1" mixing replaced ;;
        depth_mixit_2|depth_mixit_4|depth_mixit_8|depth_mixit_16) depth "$1" "${1##*_}" mixing 0 ;;
        depth_mixit_depthscaled_16) depth "$1" 16 mixing 0 --depth_alpha=1 ;;
        depth_random_2|depth_random_4|depth_random_8) depth "$1" "${1##*_}" vanilla 1 ;;
        decimal_addition_mixit) run "$1" $(algo_args additionstream_5 128 1000 250) ;;
        dyck1_mixit) run "$1" $(algo_args dyckstream_20 64 1500 250) ;;
        memorization_*) mem "$1" ;;
        modular_addition_mixit) run "$1" $(modadd_args 32 1e-3 10000 1000) --shaped_attention=mixing ;;
        modular_addition_standard) run "$1" $(modadd_args 8 3e-3 5000 500) --shaped_attention=vanilla ;;
        modular_addition_mixit_seed*) run "$1" $(modadd_args 32 1e-3 10000 1000 "${1##*seed}") \
            --shaped_attention=mixing ;;
        modular_addition_standard_seed*) run "$1" $(modadd_args 8 3e-3 5000 500 "${1##*seed}") \
            --shaped_attention=vanilla ;;
        modular_addition_mixit_replacement_seed*) replaced "$1" $(modadd_args 32 1e-3 10000 1000 "${1##*seed}") \
            --shaped_attention=mixing ;;
        imdb_mixit_2|imdb_mixit_3) run "$1" $(imdb_args "$1") --shaped_attention=mixing --seed="${1##*_}" ;;
        imdb_mixit_1200steps_1) run "$1" $(imdb_args "$1") --shaped_attention=mixing --max_steps=1200 \
            --warmup_steps=200 --eval_steps=300 ;;
        *) echo "unknown run $1"; exit 2 ;;
    esac
}

ALL=(imdb_mixit_1 imdb_standard_1 depth_mixit_2 depth_mixit_4 depth_mixit_8 depth_random_2 depth_random_4
     depth_random_8 decimal_addition_mixit dyck1_mixit memorization_standard memorization_frozen_qk
     memorization_frozen_mlp memorization_mixit imdb_mixit_2 imdb_mixit_3 imdb_mixit_1200steps_1
     memorization_standard_w12 memorization_frozen_qk_w12 memorization_frozen_mlp_w12 memorization_mixit_w12
     modular_addition_mixit modular_addition_standard modular_addition_standard_seed2 modular_addition_mixit_seed2
     modular_addition_mixit_seed3 modular_addition_mixit_seed4 modular_addition_mixit_seed5
     modular_addition_mixit_replacement_seed1337 modular_addition_mixit_replacement_seed5 imdb_mixit_replacement_1
     depth_mixit_16 depth_mixit_depthscaled_16)
[ $# -gt 0 ] || set -- "${ALL[@]}"
for name in "$@"; do
    one "$name"
done
