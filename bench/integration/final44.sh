#!/usr/bin/env bash
# Session 44's verification on the final tree: scripts/gpu_check.sh's build, tests and python steps (the full
# build, the ctest sm90_wgmma_pipelines, every C++ GPU suite: the unmasked sm90 forwards now run without a
# workspace; every pytest on the GPU with the tensor-object binding), then compute-sanitizer memcheck on
# gpu_check's reduced grid plus the unmasked ("full") sm90 grid cases but
# the five longest.
# Prediction: every suite passes (final42.sh: 459 passed, 0 failed; final43c.sh: 148 pytest passed), memcheck
# clean.
# One H200 call (~8 minutes).
#   bash bench/integration/final44.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
GPU_CHECK_STEPS="build tests python" gpu_check_call /tmp/f44
filter='Grid/*cuda_sm*_113x203_*:Grid/*cuda_sm*_128x217_*:Grid/ForwardTest.*cuda_sm90_*_2048x2048_*_d128_*'
filter+=':Grid/ForwardTest.*cuda_sm90_*_full_*:ForwardWorkspace.*-*_8193x*:*_8400x*:*_8448x*:*_4097x*:*_4100x*'
start=$(date +%s)
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 build/gpu/tests/flashattn_tests \
  --gtest_filter="$filter" --gtest_brief=1 >/tmp/f44/memcheck.log 2>&1
echo "== memcheck rc=$? in $(( $(date +%s) - start )) s: $(grep -E -m1 'ERROR SUMMARY' /tmp/f44/memcheck.log)" |
  tee -a "${OUT:-/tmp}/summary.txt"
grep -E '^\[  (PASSED|FAILED|SKIPPED)' /tmp/f44/memcheck.log | sort | uniq -c | tee -a "${OUT:-/tmp}/summary.txt"
