#!/usr/bin/env bash
# Session 42's last device call: scripts/gpu_check.sh's build and python steps (the full build, the ctest
# sm90_wgmma_pipelines, the Python extension with every pytest on the GPU) on the final tree, whose library and C++
# tests are final42.sh's and whose Python interface adds the torch.jit.trace route since then.
# Prediction: every pytest passes (as final42.sh's 144, +1 new test).
# One H200 call (~3 minutes).
#   bash bench/integration/final42b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build python" gpu_check_call /tmp/f42b
