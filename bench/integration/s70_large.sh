#!/usr/bin/env bash
# Session 70: tests/large_offsets_test.cpp on the H200: forward (with LSE) and backward (default and deterministic)
# over tensors of 2^31 + 2^23 elements and over 65636 batches, batched and varlen, one windowed sequence of
# 2^21 + 2^13 rows, a paged KV cache whose block tables point past 2^30 / 2^31 elements and a decode step of 65636
# sequences, on cuda_sm80 and cuda_sm90 (a build of head dim 128, bf16). LARGE_MEMCHECK=1 adds memcheck over the
# KV-cache cases (the session's last call, recorded as s70_large2_summary.txt).
#   [LARGE_MEMCHECK=1] bash bench/integration/s70_large.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s70l
start=$(date +%s)
cmake -S . -B "$bld/full" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS=128 \
  -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  >"$out/configure.log" 2>&1 &&
  timeout 200 cmake --build "$bld/full" -j 16 --target flashattn_tests >"$out/build.log" 2>&1
log "build rc=$? in $(($(date +%s) - start)) s"
tests=$bld/full/tests/flashattn_tests
timeout 300 "$tests" --gtest_filter='*LargeOffsets*' >"$out/tests.log" 2>&1
log "large offsets rc=$?"
grep -E '^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|max\|' "$out/tests.log" | cut -c1-240 | head -60 >>"$out/summary.txt"
cp "$out/tests.log" "${OUT:-/tmp}/"
[[ ${LARGE_MEMCHECK:-0} == 1 ]] && sanitizer_runs "$tests" '*LargeOffsetsKVCache*' 90 memcheck
log total
