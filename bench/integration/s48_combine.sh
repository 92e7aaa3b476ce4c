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
#   bash bench/integration/s48_combine.sh [CALL NAME]
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin "${1:-s48c}"  # s48_combine2.sh: s48d
narrow_cases='Grid/KVCacheTest.*cuda_sm90_*_2x1500_*:Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2900_*'
narrow_cases+=':Grid/KVCacheTest.*cuda_sm90_*_1x1300_*:Grid/KVCacheTest.*cuda_sm90_*_1x1200_*:Grid/KVCacheTest.*cuda_sm90_*_2x900_*'
switch_ab_checks "64;96;128;256" "-DFLASHATTN_SM90_NARROW_COMBINE=0" '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*CudaSm90*' \
  "$narrow_cases"
decode_rows_ab narrow 200
decode_rows_ab narrow256 200
split_sweep narrow256tiles 100 splits256tiles
log total
