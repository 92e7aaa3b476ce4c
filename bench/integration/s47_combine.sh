#!/usr/bin/env bash
# Session 47 (issue 6): the narrow tile's combine spread over the warpgroup (decode_consumer.h combine_narrow_pieces,
# FLASHATTN_SM90_NARROW_COMBINE; base: the tree built with it 0, split_kv.h's combine: 16 threads hold a decode
# step's 4 rows and take four pieces per L2 round trip; s47_narrowtrace.sh read it at 3.0 us of a 25 us decode at
# 16 pieces, d128). One call: the test binary and extension (d 64 / 96 / 128, both dtypes), the sm90 KV-cache,
# split-KV and workspace suites, racecheck on three narrow split cases, the narrow rows A/B.
# Prediction: -1.5..-2 us where tiles split into 8-16 pieces (1k-16k keys at batch 1-4: 0.85-0.95), ~1.0 at batch
# 8 and 64 (few or no pieces).
# Measured 0.96-0.97 at 16k keys batch 1 (16 pieces), 1.02-1.12 at 1k keys (4-8 pieces), ~1.0 elsewhere: not kept;
# the switch is in s47_combine.patch (apply it first to rerun this).
#   patch -p1 < bench/integration/s47_combine.patch && bash bench/integration/s47_combine.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s47c
tree_and_flag_base "64;96;128" "-DFLASHATTN_SM90_NARROW_COMBINE=0"  # sets tests
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*' 100
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_2x1800_*:Grid/KVCacheTest.*cuda_sm90_*_1x2500_*' 40 racecheck
(cd bench/integration && PYTHONPATH=$bld/pyroot FLASHATTN_DIMS_ROWS=narrow timeout 60 python3 s46_decode_dims.py base new) 2>&1 |
  grep -v Warning >"$out/combine.jsonl"
log "A/B rc=$?"
ab_summary "$out/combine.jsonl"
log total
