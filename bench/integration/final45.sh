#!/usr/bin/env bash
# Session 45's verification on the final tree (after the split count's refit and the review): scripts/gpu_check.sh's
# build, tests and python steps (the full build, the ctest sm90_wgmma_pipelines, every C++ GPU suite, every pytest
# on the GPU), then compute-sanitizer memcheck and racecheck on the KV-cache split cases.
# Prediction: every suite passes (s45_final.sh: 381 passed of the CUDA suites; final44.sh: 467 GPU tests, 154
# pytest), sanitizers clean.
# One H200 call (~7 minutes).
#   bash bench/integration/final45.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f45
filter='Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2500_*:Grid/KVCacheTest.*cuda_sm90_*_2x1800_*'
filter+=':Grid/KVCacheTest.*cuda_sm90_*_1x1000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2048_*:ForwardWorkspace.*'
for tool in memcheck racecheck; do
  start=$(date +%s)
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 build/gpu/tests/flashattn_tests \
    --gtest_filter="$filter" --gtest_brief=1 >/tmp/f45/$tool.log 2>&1
  echo "== $tool rc=$? in $(( $(date +%s) - start )) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/f45/$tool.log)" |
    tee -a "${OUT:-/tmp}/summary.txt"
  grep -E '^\[  (PASSED|FAILED|SKIPPED)' /tmp/f45/$tool.log | sort | uniq -c | tee -a "${OUT:-/tmp}/summary.txt"
done
