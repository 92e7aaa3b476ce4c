#!/usr/bin/env bash
# Session 43's last device call: scripts/gpu_check.sh's build and python steps (the full build, the ctest
# sm90_wgmma_pipelines, the Python extension with every pytest on the GPU) on the final tree: final43b.sh's tree
# plus the argument checks' fast path (interface.py).
# Prediction: every pytest passes (final43b.sh's 148).
# One H200 call (~3 minutes).
#   bash bench/integration/final43c.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build python" gpu_check_call /tmp/f43c
