#!/usr/bin/env bash
# Session 48 (issue 6): d = 256 decodes of at most 8 packed rows on the narrow tile (decode_consumer.h, 64-key
# blocks: forward_config.h kNarrowRows at d = 256). One call: the test binary and extension of the tree (d256, both
# dtypes), the sm90 suites, memcheck / racecheck / synccheck on the d256 narrow KV-cache cases, the decode kernels'
# SASS counts, s46_decode_dims.py's narrow256 rows against the tree built with NARROW_DECODE=1 (base: d256 on the
# 64-row tile, 80-key blocks), and the split-count sweep of s46_dims_rule.py on the narrow tile.
# Prediction: suites pass, sanitizers clean; 0.80-0.95 of base at batch 1-8 (the 64-row tile's chain per 80-key
# block, S 64 x 80 x 256 and P V 64 x 256 x 80, is ~8x the narrow one's tensor work), ~1.0 at batch 64; auto split
# within 0.95 of the best count on most rows.
#   bash bench/integration/s48_narrow256.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s48n
switch_ab_checks "256" "-DFLASHATTN_SM90_NARROW_DECODE=1" '*cuda_sm90*:*CudaSm90*:*SplitKV*:*Workspace*:*Determinism*' \
  'Grid/KVCacheTest.*cuda_sm90_*_d256_*'
decode_rows_ab narrow256 170
split_sweep narrow256 60 splits256
log total
