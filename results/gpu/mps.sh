# CUDA MPS (Multi-Process Service) for the GPU scripts' runs, sourced by results/gpu/paper.sh and
# results/gpu/sharing.sh. Processes sharing a GPU without it take turns on it (time slices, one process's
# kernels at a time); under MPS one server runs every process's kernels, and those of different processes run at
# the same time. The GPU's settings (its compute mode) are left as they are.
#
#   mps_start DIR   start a control daemon (its pipes in CUDA's default /tmp/nvidia-mps, its logs in DIR/log)
#                   and check that a CUDA process runs through it: on success the CUDA processes started after
#                   it use it, and a note on stderr names the server's process (return 0); on any failure a note
#                   on stderr says why, and what it started is stopped (return 1: processes share the GPU
#                   time-sliced)
#   mps_stop        stop the daemon mps_start started, once no run uses it (after `wait`)

mps_start() {
    local dir=$1
    if ! command -v nvidia-cuda-mps-control > /dev/null; then
        echo "note: nvidia-cuda-mps-control is not installed: no CUDA MPS" >&2
        return 1
    fi
    mkdir -p "$dir/log"
    export CUDA_MPS_LOG_DIRECTORY
    CUDA_MPS_LOG_DIRECTORY=$(cd "$dir/log" && pwd)
    # a daemon that an interrupted script left running is stopped first (each control command under a time limit)
    echo quit | timeout 30 nvidia-cuda-mps-control > /dev/null 2>&1 || true
    if timeout 30 nvidia-cuda-mps-control -d &&
        timeout 120 python -c "import torch; torch.ones(8, device='cuda').sum().item()" > /dev/null; then
        MPS_ON=1
        echo "note: CUDA MPS on, server $(echo get_server_list | timeout 30 nvidia-cuda-mps-control | xargs)" >&2
        return 0
    fi
    echo "note: CUDA MPS did not start (its logs: $CUDA_MPS_LOG_DIRECTORY)" >&2
    echo quit | timeout 30 nvidia-cuda-mps-control > /dev/null 2>&1 || true
    unset CUDA_MPS_LOG_DIRECTORY
    return 1
}

mps_stop() {
    if [ -n "${MPS_ON:-}" ]; then
        echo quit | timeout 30 nvidia-cuda-mps-control > /dev/null 2>&1 || true
        unset MPS_ON CUDA_MPS_LOG_DIRECTORY
    fi
}
