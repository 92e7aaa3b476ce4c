#!/usr/bin/env bash
# Session 24: three new Spread cases (tests/forward_test.cpp: q40 with keys falling along the sequence, so that in
# sm90's walking order each block's maxima rise past fp32's exponent range above the last reference: d128 bf16
# with K/V multicast, d256 bf16, d64 fp16 four-consumer). The OVERLAP_BY_SUM prototype (s24_obs.patch) would have
# lost such rows' scores; the default keeps them. Every backend of the build runs them. Ask for an H200.
#   bash bench/integration/s24_spread.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24s
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "64;128;256" "fp16;bf16" 16
rm -f "$out"/tests_configure.log "$out"/tests_build.log
timeout 120 "$bld/tests/tests/flashattn_tests" --gtest_filter='*Spread*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "spread rc=$? $(tail -2 "$out/tests.txt" | tr '\n' ' ')"
grep -E "^\[  (PASSED|FAILED|SKIPPED)|Failure|_q40_falling" "$out/tests.txt" | head -30 >>"$out/summary.txt"
"$bld/tests/tests/flashattn_tests" --gtest_filter='*Spread*q40_falling*' 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED) " >>"$out/summary.txt"
log total
