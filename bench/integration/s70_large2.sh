#!/usr/bin/env bash
# Session 70, last call: tests/large_offsets_test.cpp with the deterministic backward over the 2^31 + 2^23-element
# tensors added (both CUDA backends, batched and varlen), then memcheck over the KV-cache cases (the paged cache
# read from its highest pages, the decode step of 65636 sequences). A build of head dim 128, bf16.
#   bash bench/integration/s70_large2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s70m
start=$(date +%s)
cmake -S . -B "$bld/full" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS=128 \
  -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  >"$out/configure.log" 2>&1 &&
  timeout 200 cmake --build "$bld/full" -j 16 --target flashattn_tests >"$out/build.log" 2>&1
log "build rc=$? in $(($(date +%s) - start)) s"
tests=$bld/full/tests/flashattn_tests
timeout 150 "$tests" --gtest_filter='*LargeOffsets*' >"$out/tests.log" 2>&1
log "large offsets rc=$?"
grep -E '^\[ +(OK|FAILED|PASSED) +\]|Failure' "$out/tests.log" | cut -c1-200 | head -40 >>"$out/summary.txt"
sanitizer_runs "$tests" '*LargeOffsetsKVCache*' 90 memcheck
log total
