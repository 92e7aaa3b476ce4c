#!/usr/bin/env bash
# Session 69, after the review: the backward's column bounds as the tensors' two head dims (qk_cols, v_cols: dQ's
# was dK's again), launch_decode's kernel head dim alias removed. The full build (every head dim, both dtypes) and
# the cuda_sm90 padded forward / decode / backward cases and Api.
#   bash bench/integration/s69_review.sh
# Run: build 73 s; 62 padded and Api cases passed (20 skipped: fp32, page sizes).
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s69v
tests_and_py_build "32;64;96;128;160;192;224;256"
filter=""
for d in 40 56 72 80 96 112 136 160 200 224; do filter+="Grid/*Test.*cuda_sm90*_d${d}_*:"; done
gtest_suites "${filter}Api.*" 150
grep -m4 -A12 ': Failure' "$out/tests.log" | cut -c1-220 >>"$out/summary.txt"
log total
