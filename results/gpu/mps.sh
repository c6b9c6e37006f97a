# CUDA MPS (Multi-Process Service) for the GPU scripts' runs, sourced by results/gpu/paper.sh and
# results/gpu/sharing.sh. Processes sharing a GPU without it take turns on it (time slices, one process's
# kernels at a time); under MPS one server runs every process's kernels, and those of different processes run at
# the same time. The GPU's settings (its compute mode) are left as they are.
#
#   mps_start DIR   start a control daemon with its pipes and logs under DIR, and check that a CUDA process can
#                   run through it; on success the CUDA processes started after it use it (return 0), on any
#                   failure it says why on stderr, stops what it started and returns 1 (processes then share the
#                   GPU time-sliced)
#   mps_stop        stop the daemon mps_start started, once no run uses it (after `wait`)

mps_start() {
    local dir=$1
    if ! command -v nvidia-cuda-mps-control > /dev/null; then
        echo "note: nvidia-cuda-mps-control is not installed: no CUDA MPS" >&2
        return 1
    fi
    export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    echo quit | nvidia-cuda-mps-control > /dev/null 2>&1 || true     # a daemon an interrupted script left there
    if nvidia-cuda-mps-control -d &&
        timeout 120 python -c "import torch; torch.ones(8, device='cuda').sum().item()" > /dev/null; then
        MPS_ON=1
        return 0
    fi
    echo "note: CUDA MPS did not start (its logs: $CUDA_MPS_LOG_DIRECTORY)" >&2
    echo quit | nvidia-cuda-mps-control > /dev/null 2>&1 || true
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    return 1
}

mps_stop() {
    if [ -n "${MPS_ON:-}" ]; then
        echo quit | nvidia-cuda-mps-control > /dev/null 2>&1 || true
        unset MPS_ON CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
}
