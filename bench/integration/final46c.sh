#!/usr/bin/env bash
# Session 46: num_splits on flash_attn_func / flash_attn_varlen_func (ForwardArgs / VarlenForwardArgs; 1 = no key
# split: batch-invariant decoding). One call: the test binary and the Python extension (d128), the C++ tests that
# the change touches (batch invariance with num_splits 1 on every backend, the determinism suite, validation,
# ForwardWorkspace, the KV-cache and forward suites of cuda_sm90), then the pytest files of the interface and the
# dispatch (the op's new argument).
# Prediction: everything passes; sequence 0 bitwise the same alone and in a batch on cuda_sm90 (decode kernel
# without split-KV, the multicast kernel without its split tail).
# One H200 call (~3 minutes).
#   bash bench/integration/final46c.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin f46c
tests_and_py_build "128"  # sets tests
timeout 150 "$tests" --gtest_filter='*Determinism*:*Validation*:*Rejected*:ForwardWorkspace.*:*KVCacheTest*cuda_sm90*:*ForwardTest*cuda_sm90*' \
  --gtest_brief=1 >"$out/tests.log" 2>&1
log "tests rc=$?"
grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log" | tee -a "$out/summary.txt"
grep -E 'FAILED  \]|Failure' "$out/tests.log" | cut -c1-160 | head -20 | tee -a "$out/summary.txt"
"$tests" --gtest_filter='*BatchInvariant*' 2>&1 | grep -E '^\[ +(OK|SKIPPED|FAILED) +\]' | tee -a "$out/summary.txt"
py_tests_on_gpu test_interface.py test_dispatch.py
