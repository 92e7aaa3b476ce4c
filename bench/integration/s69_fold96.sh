#!/usr/bin/env bash
# Session 69: the d = 96 units folded into d = 128's (src/cuda/sm90/CMakeLists.txt maps each bucket of
# FLASHATTN_HEAD_DIMS to the kernel head dims that run it). The full build (every head dim, both dtypes, sm_90a)
# and a build of bucket 96 alone (which now has d = 128's units and their backward); in each, the cuda_sm90
# forward / KV-cache / backward cases of d = 96 and the other padded dims, the drawn suites and Api.
#   bash bench/integration/s69_fold96.sh
# Run: full build 79 s, 108 passed (32 skipped); bucket 96 alone built 6 d = 128 units, 16 passed (28 skipped).
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s69g
tests_and_py_build "32;64;96;128;160;192;224;256"
filter='Grid/*Test.*cuda_sm90*_d96_*:Grid/*Test.*cuda_sm90*_d40_*:Grid/*Test.*cuda_sm90*_d72_*:Grid/*Test.*cuda_sm90*_d80_*:Random/*cuda_sm90*:Api.*'
gtest_suites "$filter" 150
full_tests=$tests
bld96=$bld/only96
cmake -S . -B "$bld96" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS=96 \
  -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  >"$out/only96_configure.log" 2>&1 && timeout 200 cmake --build "$bld96" -j 16 --target flashattn_tests \
  >"$out/only96_build.log" 2>&1
log "bucket 96 alone: build rc=$? $(grep -c 'sm90/.*hdim128' "$out/only96_build.log") d128 units"
tests=$bld96/tests/flashattn_tests
gtest_suites 'Grid/*Test.*cuda_sm90*_d96_*:Grid/*Test.*cuda_sm90*_d72_*:Grid/*Test.*cuda_sm90*_d80_*' 100
tests=$full_tests
log total
