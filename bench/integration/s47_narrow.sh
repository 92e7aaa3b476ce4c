#!/usr/bin/env bash
# Session 47 (issue 6): the decode kernel's narrow tile (decode_consumer.h; forward_config.h use_narrow_rows: at
# most 8 packed query rows, S^T = K Q^T with the keys as the wgmma's M). One call: the test binary and the Python
# extension of the tree (d 64 / 96 / 128, both dtypes), the sm90 suites (KV cache, forward, varlen, split-KV,
# workspace, determinism), memcheck / racecheck / synccheck on the narrow cases, the decode kernels' SASS counts,
# and s46_decode_dims.py's narrow rows against the tree built with NARROW_DECODE=0 (base).
# Prediction: suites pass, sanitizers clean; decode steps of 4 rows 0.6-0.8 of base at 4k-16k keys (the per-block
# chain, ~1.8 us of 1.3-2 us per 128-key block, cut to ~0.5), 0.85-0.95 at 1k (fixed costs dominate), d64 the
# most; batch 64 (no split) 0.9-1.0.
#   bash bench/integration/s47_narrow.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s47n
tree_and_flag_base "64;96;128" "-DFLASHATTN_SM90_NARROW_DECODE=0"  # sets tests
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0" | tee -a "$out/summary.txt"
gtest_suites '*cuda_sm90*:*CudaSm90*:*SplitKV*:*Workspace*:*Determinism*' 200
narrow_cases='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*:Grid/KVCacheTest.*cuda_sm90_*_1x1200_*'
sanitizer_runs "$tests" "$narrow_cases" 90 memcheck racecheck synccheck
(cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=narrow timeout 230 python3 s46_decode_dims.py base new) 2>&1 |
  grep -v Warning >"$out/narrow.jsonl"
log "narrow A/B rc=$?"
ab_summary "$out/narrow.jsonl"
log total
