#!/usr/bin/env bash
# Session 43's last device call: scripts/gpu_check.sh's build and python steps (the full build, the ctest
# sm90_wgmma_pipelines, the Python extension with every pytest on the GPU) on the final tree: final43.sh's, plus
# the CUDA-graphed training-step test and the conftest's skip for requires_cuda tests in restricted builds.
# Prediction: every pytest passes (final43.sh's 147 and the graphed step).
# One H200 call (~3 minutes).
#   bash bench/integration/final43b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build python" gpu_check_call /tmp/f43b
