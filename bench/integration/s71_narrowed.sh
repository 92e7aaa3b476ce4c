#!/usr/bin/env bash
# Session 71: head dims of at most 96 on d = 128's kernels with GEMMs over 96 columns (forward_config.h
# narrowed_gemm_head_dims, ForwardConfig kGemmDim_, units forward_hdim96_*.cu). The cuda_sm90 forward suites of this
# tree (every head dim, both dtypes; the new narrowed cases among them); memcheck over the narrowed cases;
# bench/sm90_ab.py, this tree's package beside the tree without the change (s71_narrowed.patch reversed) at d = 72 /
# 80 / 96 and the unchanged d = 112 / 128 as controls, beside cuDNN; then, with the time left, session 70's large
# offsets tests (the refactored test not yet rerun on a GPU).
#   bash bench/integration/s71_narrowed.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s71n
tests_and_base_around_patch bench/integration/s71_narrowed.patch "32;64;96;128;160;192;224;256"
gtest_suites 'Grid/ForwardTest.*cuda_sm90*:*VarlenTest*cuda_sm90*:*KVCache*cuda_sm90*:Random/*cuda_sm90*:Tail/*cuda_sm90*:Spread/*cuda_sm90*:Dropout/*cuda_sm90*:Api.*' 170
grep -m4 -A12 ': Failure' "$out/tests.log" | cut -c1-220 >>"$out/summary.txt"
(PYTHONPATH=$bld/pyroot timeout 150 python3 bench/sm90_ab.py --hdims 72,80,96,112,128 \
  --seqlens 512,2048,8192 >"$out/narrowed_ab.jsonl" 2>"$out/narrowed_ab.err")
log "sm90_ab rc=$? $(grep -v Warn "$out/narrowed_ab.err" | tail -2 | cut -c1-300)"
sanitizer_runs "$tests" '*cuda_sm90*_d88_*:Tail/*cuda_sm90*_d96_*:*KVCache*cuda_sm90*_d80_*:Spread/*cuda_sm90*_d96_*' 90 memcheck
if (($(date +%s) - t0 < 420)); then
  timeout 150 "$tests" --gtest_filter='*LargeOffsets*' >"$out/large.log" 2>&1
  log "large offsets rc=$?"
  grep -E '^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure' "$out/large.log" | cut -c1-200 | head -30 >>"$out/summary.txt"
fi
log total
