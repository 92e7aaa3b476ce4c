#!/usr/bin/env bash
# Session 55: the last round's split on sequences of different lengths (s55_ragged.py), the tree's extension
# against the same tree built with -DFLASHATTN_SM90_SPLIT_KV_TAIL=0 (d128 only), two passes. Prediction:
# 0.85-1.00 where the rule splits (the dynamic schedule had already evened part of the last round), none above
# 1.01.
#   bash bench/integration/s55_ragged.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s55r
PY_DIMS="128" sm90_build_py base "-DFLASHATTN_SM90_SPLIT_KV_TAIL=0" 8 200 &
PY_DIMS="128" sm90_build_py new "" 8 200
wait
log builds
ROWS_LIMIT=100 rows_ab s55_ragged.py ragged base new
ROWS_LIMIT=100 rows_ab s55_ragged.py ragged2 new base
log total
