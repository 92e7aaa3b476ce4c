#!/usr/bin/env bash
# Session 46 (issue 6): d = 96 decodes on the d = 128 decode kernel (s46_d96.patch: single_consumer_head_dims takes
# 96, run_forward<96> tries the one-consumer d128 config, split_kv_shape sizes the records by the kernel's 128
# columns). d96 ran the 128-row d128 kernel without split-KV, and its decodes of few tiles left for cuda_sm80's
# splits. One call: the test binary (d 96 / 128) and every CUDA suite of both backends, memcheck / racecheck on the
# new d96 split case, then s46_decode_dims.py (FLASHATTN_DIMS_ROWS=96: MHA 32 heads, as Phi-3-mini) against the tree
# before the patch.
# Prediction: suites pass, sanitizers clean; d96 decodes of few tiles 0.5-0.9 of before (as d64 / d256), ~1.0 at
# batch 64.
# One H200 call (~5 minutes).
#   bash bench/integration/s46_d96.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s46e
PY_DIMS=96 PY_JOBS=4 py_builds_around_patch bench/integration/s46_d96.patch &
tests_and_py_build "96;128"  # sets tests
wait
timeout 200 "$tests" --gtest_filter='*cuda_sm*:*CudaSm*:*SplitKV*:*Workspace*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "CUDA suites rc=$?"
grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log" | tee -a "$out/summary.txt"
grep -E 'FAILED  \]' "$out/tests.log" | cut -c1-160 | head -40 | tee -a "$out/summary.txt"
cases='Grid/KVCacheTest.*cuda_sm90_*_1x2700_*:Grid/ForwardTest.*cuda_sm90_*2x1800_b2_mha32_d96*'
sanitizer_runs "$tests" "$cases" 60 memcheck racecheck
(cd bench/integration && FLASHATTN_DIMS_ROWS=96 PYTHONPATH=$bld/pyroot timeout 150 python3 s46_decode_dims.py base new) \
  2>&1 | grep -v Warning >"$out/d96.jsonl"
log "d96 A/B rc=$?"
ab_summary "$out/d96.jsonl"
log total
