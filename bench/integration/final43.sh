#!/usr/bin/env bash
# Session 43's last device call: scripts/gpu_check.sh's build and python steps (the full build, the ctest
# sm90_wgmma_pipelines, the Python extension with every pytest on the GPU) on the final tree, whose library and
# kernels are session 42's (final42.sh ran every GPU suite on them) and whose Python wrapper changed.
# Prediction: every pytest passes (as final42b.sh's 146).
# One H200 call (~3 minutes).
#   bash bench/integration/final43.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build python" gpu_check_call /tmp/f43
