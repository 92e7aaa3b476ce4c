#!/usr/bin/env bash
# Session 44's last verification, after cuda_sm80's groups-as-rows view and cuda_sm90's new split-KV routing
# (a quarter of the SMs): a d64 / d128 / d256 build (both dtypes) with the tests and the Python extension, every
# KV-cache suite of both CUDA backends, every pytest on the GPU, and the decode rows the routing moves
# (s44_decode_splits.py with FLASHATTN_DECODE_QUICK=1: batch 4 and 8 over 4096 and 16384 keys).
# Prediction: suites and pytest pass; "auto" at batch 4 reads cuda_sm80's time (40 / 128 us), at batch 8
# cuda_sm90's (45 / 156 us).
# One H200 call (~3 minutes).
#   bash bench/integration/final44b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin f44b
tests_and_py_build "64;128;256"  # sets tests
timeout 200 "$tests" --gtest_filter='*KVCache*cuda_sm*:ForwardWorkspace.*' --gtest_brief=1 \
  >"$out/kvcache_tests.log" 2>&1
log "KV-cache suites rc=$?"
grep -E '^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]' "$out/kvcache_tests.log" | sort | uniq -c | head -20 |
  tee -a "$out/summary.txt"
py_tests_on_gpu .
PYTHONPATH=$bld/pyroot FLASHATTN_DECODE_QUICK=1 timeout 120 python3 bench/integration/s44_decode_splits.py 2>&1 |
  grep -v Warning | tee "$out/decode_quick.jsonl"
log "decode rc=$?"
