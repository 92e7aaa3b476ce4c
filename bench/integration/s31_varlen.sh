#!/usr/bin/env bash
# Session 31 (review): the two new VarlenTest cases (unmasked d256 past 512 keys: the 80-key O-over-V kernel with
# the early Q prefetch, ragged and empty sequences) and every other VarlenTest case on the GPU, racecheck and
# synccheck on the new ones.
# One H200 call (~2.5 minutes).
#   bash bench/integration/s31_varlen.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s31v
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "256" "fp16;bf16" 14 ""
new='*VarlenTest*cuda_sm90*max200x900*:*VarlenTest*cuda_sm90*max150x700*'
"$bld/tests/tests/flashattn_tests" --gtest_list_tests --gtest_filter="$new" | tail -3 | tee -a "$out/summary.txt"
suites_and_racecheck '*VarlenTest*' "$new" 120
synccheck_on "$new" 60
grep -E "FAILED|Failure" "$out/tests.txt" | head -10 | tee -a "$out/summary.txt"
rm -f "$out"/tests_configure.log "$out"/tests_build.log "$out/racecheck.txt"
log total
