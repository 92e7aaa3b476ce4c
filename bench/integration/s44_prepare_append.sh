#!/usr/bin/env bash
# Session 44: the KV-cache append done by cuda_sm90's prepare kernel (forward_launch.h, append_kv.h) instead of a
# kernel of its own: a d64 / d128 / d256 build, the KV-cache and varlen suites of both CUDA backends (the prepare
# kernel serves both), compute-sanitizer memcheck and racecheck on the sm90 KV-cache grid cases with an append, then
# s44_append.py (the graphed decode step with and without k / v).
# Prediction: suites pass, sanitizers clean; the append's cost per graphed step 2.3-3.9 -> under 1 us.
# One H200 call (~4 minutes).
#   bash bench/integration/s44_prepare_append.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44q
tests_and_py_build "64;128;256"  # sets tests
timeout 240 "$tests" --gtest_filter='*KVCache*cuda_sm*:*Varlen*cuda_sm*' --gtest_brief=1 >"$out/suites.log" 2>&1
log "KV-cache + varlen suites rc=$?"
grep -E '^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]' "$out/suites.log" | sort | uniq -c | head -20 | tee -a "$out/summary.txt"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_brief=1 \
    --gtest_filter='Grid/KVCacheTest.*cuda_sm90_*_append_*' >"$out/$tool.log" 2>&1
  log "$tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log") $(grep -E '^\[  (PASSED|SKIPPED)' "$out/$tool.log" | tr '\n' ' ')"
done
PYTHONPATH=$bld/pyroot timeout 150 python3 bench/integration/s44_append.py 2>&1 | grep -v Warning |
  tee "$out/append_after.jsonl"
log "append rc=$?"
