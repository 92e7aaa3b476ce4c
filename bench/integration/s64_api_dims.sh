#!/usr/bin/env bash
# Session 64, call 6: Api.* (Sm90BackwardRouting's head-dim skips) in builds of one head dim, 128 and 256: the
# routing test must pass or skip, naming the kernels not compiled, where a build lacks d = 128 or d = 256.
#   bash bench/integration/s64_api_dims.sh
# (Run in session 64: d128-only build Api 10 passed; d256-only Api 9 passed, Sm90BackwardRouting skipped naming
# the kernels not compiled.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s64a2
for d in 128 256; do
  (cmake -S . -B "$bld/d$d" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS="$d" \
    -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
    -DFLASHATTN_BUILD_PYTHON=OFF >"$out/configure_$d.log" 2>&1 &&
    timeout 300 cmake --build "$bld/d$d" -j 8 --target flashattn_tests >"$out/build_$d.log" 2>&1
  log "build d$d rc=$?") &
done
wait
for d in 128 256; do
  "$bld/d$d/tests/flashattn_tests" --gtest_filter='Api.*' >"$out/api_$d.log" 2>&1
  log "Api d$d rc=$? $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$out/api_$d.log" | tr '\n' ' ')"
  grep -A2 "Sm90BackwardRouting" "$out/api_$d.log" | head -6 | cut -c1-250 >>"$out/summary.txt"
done
log total
