#!/usr/bin/env bash
# Session 48 (issue 6): the narrow tile's combine over the whole warpgroup (decode_consumer.h combine_narrow_pieces,
# forward_config.h NARROW_COMBINE), against the tree built with NARROW_COMBINE=0 (split_kv.h's combine, warp 0
# alone, 4 pieces per L2 round trip at dv 128 and 2 at dv 256: s48_trace.sh). One call: the test binary and
# extension of the tree (d 64 / 96 / 128 / 256, both dtypes), the KV-cache, split-KV and workspace suites on
# cuda_sm90, memcheck / racecheck / synccheck on the narrow KV-cache cases, s46_decode_dims.py's narrow and
# narrow256 rows (with SDPA's FlashAttention 2 and cuDNN beside), and the d256 split-count sweep on the new combine.
# Prediction: suites pass, sanitizers clean; at 16 pieces d256 -3 us (8 rounds -> 1: 0.80-0.85 of base at 4k-16k
# batch 1), d128 -1.5 us (4 -> 1 round: ~0.9 at 4k, ~0.95 at 16k), 8 pieces d128 -0.6 us (~0.95 at 1k); batch 64
# (no split) 1.00.
#   bash bench/integration/s48_combine.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s48c
tree_and_flag_base "64;96;128;256" "-DFLASHATTN_SM90_NARROW_COMBINE=0"  # sets tests
sm90_sass_counts "$bld/full" | grep -E "Li1ELi0ELi1ELb0ELb1" | tee -a "$out/summary.txt"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*' 200
narrow_cases='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2900_*'
narrow_cases+=':Grid/KVCacheTest.*cuda_sm90_*_1x1300_*:Grid/KVCacheTest.*cuda_sm90_*_1x1200_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*'
sanitizer_runs "$tests" "$narrow_cases" 100 memcheck racecheck synccheck
for rows in narrow narrow256; do
  (cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=$rows timeout 200 python3 s46_decode_dims.py base new) 2>&1 |
    grep -v Warning >"$out/$rows.jsonl"
  log "$rows A/B rc=$?"
  ab_summary "$out/$rows.jsonl"
done
(cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=narrow256tiles timeout 100 python3 s46_dims_rule.py) 2>&1 |
  grep -v Warning >"$out/splits256tiles.jsonl"
log "split sweep rc=$?"
grep "^#" "$out/splits256tiles.jsonl" >>"$out/summary.txt"
log total
