#!/usr/bin/env bash
# Session 46: the final tree's last test change on the GPU (ForwardWorkspace: a d96 decode's records sized by the d128
# kernel's 128 columns; its first checks need d128), with the d96 suites of both backends: the test binary for head
# dims 96 and 128. (Its first run built d96 alone, where the test skips at its d128 check.)
# Prediction: every test passes.
# One H200 call (~2 minutes).
#   bash bench/integration/final46b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin f46b
tests_and_py_build "96;128"  # sets tests
timeout 150 "$tests" --gtest_filter='ForwardWorkspace.*:*cuda_sm*d96*:*SplitKV*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "tests rc=$?"
grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log" | tee -a "$out/summary.txt"
grep -E 'FAILED  \]|Failure' "$out/tests.log" | cut -c1-160 | head -20 | tee -a "$out/summary.txt"
"$tests" --gtest_filter='ForwardWorkspace.*' 2>&1 | grep -E '^\[ +(OK|SKIPPED|FAILED) +\]' | tee -a "$out/summary.txt"
