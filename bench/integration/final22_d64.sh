#!/usr/bin/env bash
# Session 22, after final22.sh: the d64 by-sum softmax made the default (FLASHATTN_SM90_RESCALE_BY_SUM_D64=1; the
# d64 kernels only, their cubins identical to s22_bysum64.sh's =2 build). The default tree's d64 test binary on the
# sm90 suites (fp16 + bf16), synccheck and memcheck on a subset, then bench/compare.py's d64 forward rows (the
# standing of those rows; final22.sh's grid stands for d128 / d256, whose kernels did not change). Ask for an H200.
#   bash bench/integration/final22_d64.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s22d
test_cli_build "64" "fp16;bf16" 8 &
PY_DIMS=64 sm90_build_py new "" 8 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
tests=$bld/tests/tests/flashattn_tests
timeout 90 "$tests" --gtest_filter='*cuda_sm90*:*Sm90*' --gtest_brief=1 >/tmp/s22d-tests.txt 2>&1
log "suites rc=$? $(grep -E '^\[  (PASSED|FAILED)' /tmp/s22d-tests.txt | tr '\n' ' ')"
for tool in synccheck memcheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" \
    --gtest_filter='*ForwardTest*cuda_sm90*128x217*:*ForwardSpread*cuda_sm90*d64*' --gtest_brief=1 >/tmp/s22d-$tool.txt 2>&1
  log "$tool rc=$? $(grep -m1 'SUMMARY' /tmp/s22d-$tool.txt)"
done
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --modes fwd --hdims 64 --rounds 4 \
  --no-decode --out "$OUT/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd-d64" >"$out/compare_fwd.log" 2>&1
log "compare rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log"
log total
