#!/usr/bin/env bash
# Session 44: cuda_sm80's KV-cache decoding with the group's heads as rows (src/cuda/sm80/backend.cu
# groups_as_rows): the full build, the KV-cache suites of both CUDA backends (two new cases for the view),
# compute-sanitizer memcheck on the cases that take the view, then s44_decode_splits.py beside SDPA's FA2 and cuDNN.
# Prediction: suites pass, memcheck clean; cuda_sm80 at batch 1-8 2-5x faster than s44_decode_splits.sh read
# (0.14-0.75 TB/s), near FA2's (0.9-4.1 TB/s).
# One H200 call (~6 minutes).
#   bash bench/integration/s44_decode_rows.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44r
tests_and_py_build "64;128;256"  # sets tests
timeout 200 "$tests" --gtest_filter='*KVCache*cuda_sm*' --gtest_brief=1 >"$out/kvcache_tests.log" 2>&1
log "KV-cache suites rc=$?"
grep -E '^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]' "$out/kvcache_tests.log" | sort | uniq -c | head -20 |
  tee -a "$out/summary.txt"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 "$tests" --gtest_brief=1 \
  --gtest_filter='Grid/KVCacheTest.*cuda_sm80_*_1x700_*:Grid/KVCacheTest.*cuda_sm80_*_1x1500_*:Grid/KVCacheTest.*cuda_sm80_*_1x2048_*' \
  >"$out/memcheck.log" 2>&1
log "memcheck rc=$? $(grep -E -m1 'ERROR SUMMARY' "$out/memcheck.log") $(grep -E '^\[  (PASSED|SKIPPED)' "$out/memcheck.log" | tr '\n' ' ')"
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s44_decode_splits.py 2>&1 | grep -v Warning |
  tee "$out/decode_rows.jsonl"
log "decode rc=$?"
