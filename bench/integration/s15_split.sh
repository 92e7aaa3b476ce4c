#!/usr/bin/env bash
# Session 15 (issue 6): the split tail's correctness on the GPU (d2d3a24 + this script): tests/split_tail_test.cpp
# (six shapes that take it on 132 SMs: d128 with and without K/V multicast, d96, d256, two-consumer d64,
# (192, 128)), the same suite on a mutated build (s15_split_mutate.patch: the merge leaves the other parts out;
# it must fail), the sm90 GPU suites, and memcheck / racecheck on one split case.
#   bash bench/integration/s15_split.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s15s
trap 'cp "$out/summary.txt" "$out"/*.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
tree_copy /tmp/s15-mut bench/integration/s15_split_mutate.patch
test_build . "64;96;128;192;256" "fp16;bf16" "" 12 &
(bld=/tmp/s15s-mut-build out=$out/mut && mkdir -p $bld $out && test_build /tmp/s15-mut 128 bf16 "" 4) &
wait
tests=$bld/tests/tests/flashattn_tests
timeout 300 "$tests" --gtest_filter='*SplitTail*' >"$out/split_tests.txt" 2>&1
log "split suite rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/split_tests.txt" | tr '\n' ' ')"
grep -E '^\[ +(OK|FAILED) +\]' "$out/split_tests.txt" | tee -a "$out/summary.txt"
timeout 200 /tmp/s15s-mut-build/tests/tests/flashattn_tests --gtest_filter='*SplitTail*' >"$out/mutated_tests.txt" 2>&1
log "mutated split suite rc=$? (must fail) $(grep -E '^\[  (PASSED|FAILED)' "$out/mutated_tests.txt" | tr '\n' ' ')"
grep -E '^\[ +(OK|FAILED) +\]' "$out/mutated_tests.txt" | tee -a "$out/summary.txt"
timeout 200 "$tests" --gtest_filter='*cuda_sm90*:*Sm90*:-*SplitTail*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "sm90 suites rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" --gtest_filter='*SplitTail*/4_*' \
    --gtest_brief=1 >"$out/$tool.txt" 2>&1
  log "$tool rc=$? $(grep -m1 'SUMMARY' "$out/$tool.txt")"
done
log total
