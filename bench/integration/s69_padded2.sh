#!/usr/bin/env bash
# Session 69, second call: padded head dims on cuda_sm90's forward (every multiple of 8 from 8, PADDED_MIN
# removed after s69_padded.sh) and backward (the d = dv = 64 / 128 / 192 / 256 kernels, the dQ accumulator's rows
# the kernel's), the decode kernels' direct row stores clipped to O's columns. The cuda_sm90 forward, varlen,
# KV-cache, drawn, tail, dropout, backward and determinism suites and Api (the full build, every head dim, both
# dtypes); memcheck over the padded forward / KV-cache / backward cases on cuda_sm90 but the long ones.
#   bash bench/integration/s69_padded2.sh
# Run: build 82 s; suites 401 passed (74 skipped); memcheck 0 errors over 44 padded cases.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s69q
tests_and_py_build "32;64;96;128;160;192;224;256"
gtest_suites 'Grid/ForwardTest.*cuda_sm90*:*VarlenTest*cuda_sm90*:*KVCache*cuda_sm90*:Random/*cuda_sm90*:Tail/*cuda_sm90*:Dropout/*cuda_sm90*:Grid/BackwardTest.*cuda_sm90*:*Determinism*:Api.*' 280
grep -m4 -A12 ': Failure' "$out/tests.log" | cut -c1-220 >>"$out/summary.txt"
grep -E '^\[ +(OK|FAILED) +\]' "$out/tests.log" | cut -c1-160 | gzip >"${OUT:-/tmp}/tests_list.txt.gz"
padded=""
for d in 8 40 48 56 72 80 96 112 136 160 200 224; do
  padded+="Grid/ForwardTest.*cuda_sm90*_d${d}_*:Grid/KVCacheTest.*cuda_sm90*_d${d}_*:Grid/BackwardTest.*cuda_sm90*_d${d}_*:"
done
sanitizer_runs "$tests" "${padded%:}-*4100x4100*:*2048x2048*:*2100x2100*:*1100x1000*:*1023x1024*:*300x2100*" 120 memcheck
log total
