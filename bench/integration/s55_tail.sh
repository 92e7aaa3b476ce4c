#!/usr/bin/env bash
# Session 55: the last round's tiles split (SPLIT_KV_TAIL) against the tree with the switch off: the tree's
# tests and extension beside the extension built with -DFLASHATTN_SM90_SPLIT_KV_TAIL=0, s55_tail.py's rows in
# two passes (orders swapped, SDPA beside), the new tail cases under the three sanitizers, then every decode
# check. Prediction (s55_batches.sh's uniform counts, the cost model of split_kv_tail): d128 at batch 17 / 20 /
# 24 0.75-0.85 of the time over 4096-16384 keys, 0.85-0.95 over 1024; batch 28-40 0.95-1.0; controls 1.00.
#   bash bench/integration/s55_tail.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s55t
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_SPLIT_KV_TAIL=0"
log builds
ROWS_LIMIT=240 rows_ab s55_tail.py tail base new
ROWS_LIMIT=240 rows_ab s55_tail.py tail2 new base
tail_cases='Grid/KVCacheTest.*cuda_sm90*_b17_*:Grid/KVCacheTest.*cuda_sm90*_b20_*'
tail_cases+=':Grid/KVCacheTest.*cuda_sm90*_b25_*:Grid/KVCacheTest.*cuda_sm90*_b70_*'
sanitizer_runs "$tests" "$tail_cases" 120 memcheck racecheck synccheck
decode_change_checks
log total
