#!/usr/bin/env bash
# Session 48 (issue 6), the third form of the narrow tile's combine (decode_consumer.h combine_narrow_pieces: one
# float4 of the records' rows per thread, 16 pieces a round, the round's weights independent of each other; only
# where s.rows x dv <= 512, split_kv.h's combine for the others) and the split count's cap on a tile's records
# (split_kv_plan.h kMaxTileRecordFloats, narrow tile only), against the tree built with NARROW_COMBINE=0 (which
# keeps the cap). s48_combine.sh's steps (suites, sanitizers, s46_decode_dims.py narrow / narrow256 rows, the
# d256 split sweep). The first two forms (s48_combine.sh on commits 405b87e and 41463ab): 4-row tiles
# 0.94-1.0, 2-row d256 0.81-0.98, but 8-row tiles 1.02-1.27.
# Prediction: rows x dv <= 512 as the second form (0.80-0.98), 8-row tiles 1.00 (the same combine as base); the
# d256 sweep's auto within 1.05 of the best count on every row (MQA and 32/4 at 16k: 16 pieces).
#   bash bench/integration/s48_combine2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s48d
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
