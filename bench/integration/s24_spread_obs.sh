#!/usr/bin/env bash
# Session 24: does the new q40-falling Spread case catch the hole of the OVERLAP_BY_SUM prototype (s24_obs.patch:
# probabilities overflowing fp32 against a stale reference, not recovered)? The d128 bf16 test binary of a tree
# copy with the patch, built with the switch on, on the d128 Spread cases. Expected: the new case fails on
# cuda_sm90, the others pass (s24_obs.sh ran the old suites with the switch: all passed). Ask for an H200.
#   bash bench/integration/s24_spread_obs.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24so
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
tree_copy "$bld/obs-tree" bench/integration/s24_obs.patch
(cd "$bld/obs-tree" && test_build . "128" "bf16" "-DFLASHATTN_SM90_OVERLAP_BY_SUM=1" 16)
rm -f "$out"/tests_configure.log "$out"/tests_build.log
timeout 60 "$bld/tests/tests/flashattn_tests" --gtest_filter='*Spread*cuda_sm90*d128*' >"$out/tests.txt" 2>&1
log "spread (obs) rc=$?"
grep -E "^\[ +(OK|FAILED) \]|^\[  (PASSED|FAILED)" "$out/tests.txt" | head -20 >>"$out/summary.txt"
grep -m3 -E "max\||NaN|Failure" "$out/tests.txt" >>"$out/summary.txt"
rm -f "$out/tests.txt"
log total
