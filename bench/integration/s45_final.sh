#!/usr/bin/env bash
# Session 45, final tree: split-KV's combine in one batched pass (split_kv.h, FLASHATTN_SM90_SPLIT_KV_COMBINE_BATCH
# 4) against the committed two-pass form (s45_combine.patch reversed, the package flashattn_base), beside the full
# verification: every CUDA suite of both backends, memcheck and racecheck on the split cases, s45_decode.py.
# Prediction: suites pass, sanitizers clean; the one-pass combine 0.85-0.95 of the two-pass time at batch 1-2
# (8-16 pieces a tile: 8-16 L2 round trips become 2-4), ~1.0 at batch 4-8 (2-4 pieces).
# One H200 call (~8 minutes).
#   bash bench/integration/s45_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s45f
tree_copy "$bld/base-tree" bench/integration/s45_combine.patch -R
(cd "$bld/base-tree" && PY_DIMS="128" sm90_build_py base "" 6 400) &
tests_and_py_build "64;128;256"  # sets tests
wait
sm90_sass_counts "$bld/full" | grep -E "hdim128_bf16" | tee -a "$out/summary.txt"
PYTHONPATH=$bld/pyroot timeout 150 python3 bench/integration/s45_combine_ab.py 2>&1 | grep -v Warning |
  tee "$out/combine_ab.jsonl"
log "combine A/B rc=$?"
timeout 240 "$tests" --gtest_filter='*cuda_sm*:*CudaSm*:*SplitKV*:*Workspace*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "CUDA suites rc=$?"
grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log" | tee -a "$out/summary.txt"
grep -E 'FAILED  \]' "$out/tests.log" | cut -c1-160 | head -40 | tee -a "$out/summary.txt"
split_cases='Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2500_*:Grid/KVCacheTest.*cuda_sm90_*_2x1800_*:Grid/KVCacheTest.*cuda_sm90_*_1x1000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2048_*'
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" --gtest_brief=1 \
    --gtest_filter="$split_cases" >"$out/$tool.log" 2>&1
  log "$tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log") $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$out/$tool.log" | cut -c1-120 | tr '\n' ' ')"
  grep -E -m2 -A6 '^========= (Invalid|Misaligned|Error|Race|Barrier)' "$out/$tool.log" | cut -c1-200 >>"$out/summary.txt"
done
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s45_decode.py 2>&1 | grep -v Warning |
  tee "$out/decode.jsonl"
log "decode rc=$?"
