#!/usr/bin/env bash
# Session 55: the tail's pieces first (s55_first.patch: SplitKV split_tiles, the first tiles % sms tiles split
# and their pieces the schedule's first items, the whole tiles after them) against the tree with the patch
# reversed (s55_tail.sh's form: the pieces after the whole tiles, whose records, arrivals and combines then
# end the launch). s55_tail.py's rows in two passes, orders swapped, SDPA beside; synccheck on the tail cases;
# every decode check. Prediction: 1024 keys at batch 17-24 0.92-0.97 of the time (the last pieces' combine
# no longer exposed at the end), 4096 keys 0.97-1.00, 16384 keys 0.98-1.02, controls 1.00.
#   bash bench/integration/s55_first.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s55f
patch_ab_builds bench/integration/s55_first.patch
log builds
ROWS_LIMIT=240 rows_ab s55_tail.py first base new
ROWS_LIMIT=240 rows_ab s55_tail.py first2 new base
tail_cases='Grid/KVCacheTest.*cuda_sm90*_b17_*:Grid/KVCacheTest.*cuda_sm90*_b20_*'
tail_cases+=':Grid/KVCacheTest.*cuda_sm90*_b25_*:Grid/KVCacheTest.*cuda_sm90*_b70_*'
sanitizer_runs "$tests" "$tail_cases" 60 synccheck
decode_change_checks
log total
