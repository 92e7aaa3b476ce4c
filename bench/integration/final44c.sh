#!/usr/bin/env bash
# Session 44's last device call, on the final tree: after the append moved into cuda_sm90's prepare kernel, the
# conversion helpers shared (element_convert.h: the KV-cache kernels and the backward's preprocess) and the device
# scripts' build steps made helpers (tests_and_py_build): a d128 build (both dtypes, the backward included), every
# KV-cache and varlen suite of both CUDA backends, the sm80 backward grid at d128, every pytest on the GPU.
# Prediction: everything passes (s44_prepare_append.sh: 121 KV-cache + varlen; final44.sh's backward cases).
# One H200 call (~3 minutes).
#   bash bench/integration/final44c.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin f44c
tests_and_py_build "128"  # sets tests
timeout 200 "$tests" --gtest_filter='*KVCache*cuda_sm*:*Varlen*cuda_sm*:*Backward*cuda_sm80*' --gtest_brief=1 \
  >"$out/suites.log" 2>&1
log "KV-cache, varlen and backward suites rc=$?"
grep -E '^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]' "$out/suites.log" | sort | uniq -c | head -20 | tee -a "$out/summary.txt"
py_tests_on_gpu .
