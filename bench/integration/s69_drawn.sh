#!/usr/bin/env bash
# Session 69, last call: the drawn suites (forward, varlen, KV-cache; tests/support/attention_cases.cpp) now draw
# the odd head dims (8 / 40 / 72 / 160 / 224) for cuda_sm90 too, which runs them on a wider kernel: every drawn
# CUDA case and Api, on the final tree (every head dim, both dtypes, sm_90a).
#   bash bench/integration/s69_drawn.sh
# Run: build 74 s; 136 drawn and Api cases passed (12 skipped).
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s69r
tests_and_py_build "32;64;96;128;160;192;224;256"
gtest_suites 'Random/*cuda*:Api.*' 200
grep -m4 -A12 ': Failure' "$out/tests.log" | cut -c1-220 >>"$out/summary.txt"
grep -c "_d8_\|_d40_\|_d72_\|_d160_\|_d224_" "$out/tests.log" >>"$out/summary.txt"
log total
