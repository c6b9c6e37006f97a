# Shell functions the GPU scripts share, sourced by experiments/gpu/run.sh, paper.sh and sharing.sh.
#
#   describe_machine  the date, the GPU (nvidia-smi's csv: a header, then name, memory, driver) or else the CPU
#                     model, and torch's and CUDA's versions, on stdout: a run's machine.txt
#   require_counts NAME...  each named variable is a positive whole number, or a one-line error and exit 2
#   command_line WORD...    the words as one shell-quoted command line (no newline): a run's command.sh
#
# CUDA MPS (Multi-Process Service). Processes sharing a GPU without it take turns on it (time slices, one
# process's kernels at a time); under MPS one server runs every process's kernels, and those of different
# processes run at the same time. While a control daemon runs, every CUDA process started on the machine goes
# through it. The GPU's settings (its compute mode) are left as they are; each control command runs under a time
# limit.
#
#   mps_running     whether a control daemon answers (its pipes in CUDA's default folder, /tmp/nvidia-mps)
#   mps_start DIR   use the daemon that runs, or start one (its logs in DIR/log) and check that a CUDA process
#                   runs through it: return 0, with a note on stderr naming the server; on any failure a note on
#                   stderr says why, what it started is stopped, and it returns 1 (processes then share the GPU
#                   time-sliced)
#   mps_stop        stop the daemon mps_start started (not one it found running), once no run uses it
#   mps_quit        stop any daemon that runs (no process may be using it)

describe_machine() {
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || lscpu | grep 'Model name'
    python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
}

require_counts() {
    local name
    for name in "$@"; do
        if ! [[ ${!name} =~ ^[1-9][0-9]*$ ]]; then
            echo "error: $name must be a positive whole number (got '${!name}')" >&2
            exit 2
        fi
    done
}

command_line() {
    printf '%q ' "$@" | sed 's/ $//'
}

mps_control() {   # mps_control COMMAND: one command to the running daemon
    echo "$1" | timeout 30 nvidia-cuda-mps-control
}

mps_running() {
    command -v nvidia-cuda-mps-control > /dev/null && mps_control get_server_list > /dev/null 2>&1
}

mps_start() {
    local dir=$1
    if mps_running; then
        echo "note: CUDA MPS on, a daemon that was running; servers: $(mps_control get_server_list | xargs)" >&2
        return 0
    fi
    if ! command -v nvidia-cuda-mps-control > /dev/null; then
        echo "note: nvidia-cuda-mps-control is not installed: no CUDA MPS" >&2
        return 1
    fi
    mkdir -p "$dir/log"
    export CUDA_MPS_LOG_DIRECTORY
    CUDA_MPS_LOG_DIRECTORY=$(cd "$dir/log" && pwd)
    if timeout 30 nvidia-cuda-mps-control -d &&
        timeout 120 python -c "import torch; torch.ones(8, device='cuda').sum().item()" > /dev/null; then
        MPS_STARTED=1
        echo "note: CUDA MPS on; servers: $(mps_control get_server_list | xargs)" >&2
        return 0
    fi
    echo "note: CUDA MPS did not start (its logs: $CUDA_MPS_LOG_DIRECTORY)" >&2
    mps_control quit > /dev/null 2>&1 || true
    unset CUDA_MPS_LOG_DIRECTORY
    return 1
}

mps_stop() {
    if [ -n "${MPS_STARTED:-}" ]; then
        mps_control quit > /dev/null 2>&1 || true
        unset MPS_STARTED CUDA_MPS_LOG_DIRECTORY
    fi
}

mps_quit() {
    if mps_running; then
        echo "note: stopping the CUDA MPS daemon that was running" >&2
        mps_control quit > /dev/null 2>&1 || true
    fi
}
