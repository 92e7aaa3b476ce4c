#!/usr/bin/env bash
# Session 36's verification of the final tree (VARLEN_HEAD_MAJOR=1: unmasked varlen problems over dense K/V in
# head-major order; the other session-36 switches off, their default cubins unchanged by local SASS):
# scripts/gpu_check.sh's build, tests and python steps (the full build, the ctest sm90_wgmma_pipelines, every GPU
# suite of the test binary, the Python extension with its pytest suite on the GPU; no grid: the batched kernels
# and their launches did not change), then bench/varlen_compare.py on that build in 400 ms stints (d128 / d256,
# four length mixes, causal and not, flashattn beside FA2's varlen kernel, the batched call on the equal mix and
# cuDNN's ragged path) for docs/performance.md. Prediction: every suite passes; varlen 1.5-2.3x FA2's varlen.
# One H200 call (~8 minutes).
#   bash bench/integration/final36.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f36
PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout 200 python3 bench/varlen_compare.py --hdims 128,256 \
  --no-sm80 --sustained 4 --out "${OUT:-/tmp}" --tag final36 >"${OUT:-/tmp}/varlen.log" 2>&1
echo "== varlen rc=$?" | tee -a "${OUT:-/tmp}/summary.txt"
tail -19 "${OUT:-/tmp}/varlen.log"
