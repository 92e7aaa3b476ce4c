#!/usr/bin/env bash
# Session 15 (issue 6), on the commit that adds this script: the split tail again after the d96 fix (s15_split.sh:
# d128 cases passed, the mutated build failed as it must, d96 overran its part region and the later cases died with
# it), then its A/B: base = FLASHATTN_SM90_SPLIT_TAIL=0, new = default, ctrl = base again, on the d128 and d256
# non-causal rows from 2k (the rows it applies to: 2048 d128 tiles / 1024 d256 tiles on 132 SMs, the last round
# 52% / 76% full), three passes beside cuDNN.
# Prediction (ncu of s15_ncu.sh: SM active cycles avg / max 0.968 at d128 16k; the last round runs on fewer SMs at a
# higher clock): +1.5-2.5% at 8k / 16k, +0.5-1.5% at 2k / 4k (the parts' stores and merges weigh more there).
#   bash bench/integration/s15_split2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s15t
trap 'cp "$out/summary.txt" "$out"/*.txt "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null' EXIT
test_build . "64;96;128;192;256" "fp16;bf16" "" 10 &
PY_DIMS="128;256" sm90_build_py base "-DFLASHATTN_SM90_SPLIT_TAIL=0" 3 400 &
PY_DIMS="128;256" sm90_build_py new "" 3 400 &
wait
tests=$bld/tests/tests/flashattn_tests
timeout 200 "$tests" --gtest_filter='*SplitTail*' >"$out/split_tests.txt" 2>&1
log "split suite rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/split_tests.txt" | tr '\n' ' ')"
grep -E '^\[ +(OK|FAILED) +\]' "$out/split_tests.txt" | cut -c1-120 | tee -a "$out/summary.txt"
timeout 200 "$tests" --gtest_filter='*cuda_sm90*:*Sm90*:-*SplitTail*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "sm90 suites rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
for c in 2 3 5; do
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 "$tests" --gtest_filter="*SplitTail*/${c}_*" \
    --gtest_brief=1 >"$out/memcheck$c.txt" 2>&1
  log "memcheck case $c rc=$? $(grep -m1 'SUMMARY' "$out/memcheck$c.txt")"
done
sm90_ctrl_copy
for pass in "p1 base,new,ctrl" "p2 ctrl,new,base" "p3 new,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 128 0 2048,4096,8192,16384 60 150
  sm90_ab "$1" "$2" 256 0 2048,4096,8192,16384 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new ctrl | tee -a "$out/summary.txt"
log total
