#!/usr/bin/env bash
# Session 46 (issue 6): the one-consumer decode kernel, and with it split-KV, at d = dv = 64 and 256
# (forward_config.h SINGLE_CONSUMER_OTHER_DIMS). One call: the test binary and the Python extension of the tree
# (d 64 / 128 / 256), every CUDA suite of both backends, memcheck / racecheck / synccheck on the d64 / d256 split
# cases, and s46_decode_dims.py against the tree built with SINGLE_CONSUMER_OTHER_DIMS=0 (base).
# Prediction: suites pass, sanitizers clean; d256 / d64 decodes of few tiles 1.2-2x faster than base (cuda_sm80's
# splits; d128 read 1.27x at 4096 keys b1, 1.66x at 16384), ~1.0 at batch 64 and for the short-query forward.
# One H200 call (~8 minutes).
#   bash bench/integration/s46_dims.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s46d
PY_DIMS="64;256" sm90_build_py base "-DFLASHATTN_SM90_SINGLE_CONSUMER_OTHER_DIMS=0" 5 400 &
tests_and_py_build "64;128;256"  # sets tests
wait
rm -f "$out"/py_*_configure.log
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0" | tee -a "$out/summary.txt"
timeout 240 "$tests" --gtest_filter='*cuda_sm*:*CudaSm*:*SplitKV*:*Workspace*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "CUDA suites rc=$?"
grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log" | tee -a "$out/summary.txt"
grep -E 'FAILED  \]' "$out/tests.log" | cut -c1-160 | head -40 | tee -a "$out/summary.txt"
split_cases='Grid/KVCacheTest.*cuda_sm90_*_1x2000_*:Grid/KVCacheTest.*cuda_sm90_*_1x3100_*:Grid/KVCacheTest.*cuda_sm90_*_1x2600_*:Grid/KVCacheTest.*cuda_sm90_*_4x2200_*'
sanitizer_runs "$tests" "$split_cases" 100 memcheck racecheck synccheck
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 240 python3 s46_decode_dims.py base new) 2>&1 |
  grep -v Warning >"$out/dims.jsonl"
log "dims A/B rc=$?"
ab_summary "$out/dims.jsonl"
log total
