#!/usr/bin/env bash
# Session 70: a fuzz campaign of the drawn suites (Random/*: forward, varlen, KV-cache and backward cases drawn
# afresh from each run's FLASHATTN_TEST_SEED, tests/support/attention_cases.cpp) on both CUDA backends: four
# workers, each running the whole drawn set again and again with a new seed until the time is up (FUZZ_SECONDS,
# default 330), every failing run's log and seed kept (sm90_device_common.sh drawn_fuzz).
#   bash bench/integration/s70_fuzz.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s70f
start=$(date +%s)
cmake -S . -B "$bld/full" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
  -DFLASHATTN_HEAD_DIMS="32;64;96;128;160;192;224;256" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/configure.log" 2>&1 &&
  timeout 300 cmake --build "$bld/full" -j 16 --target flashattn_tests >"$out/build.log" 2>&1
log "build rc=$? in $(($(date +%s) - start)) s"
tests=$bld/full/tests/flashattn_tests
drawn_fuzz "${FUZZ_SECONDS:-330}"
log total
