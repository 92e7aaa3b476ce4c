#!/usr/bin/env bash
# Session 55: the last round's split over a sweep of batch sizes and group shapes (s55_sweep.py), the tree's
# extension against the same tree built with -DFLASHATTN_SM90_SPLIT_KV_TAIL=0, two passes (orders swapped).
# Prediction: every row the rule splits 0.75-1.00 of the time, none above 1.01; unsplit rows 0.99-1.01.
#   bash bench/integration/s55_sweep.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s55s
PY_DIMS="64;128;256" sm90_build_py base "-DFLASHATTN_SM90_SPLIT_KV_TAIL=0" 8 300 &
PY_DIMS="64;128;256" sm90_build_py new "" 8 300
wait
log builds
ROWS_LIMIT=200 rows_ab s55_sweep.py sweep base new
ROWS_LIMIT=200 rows_ab s55_sweep.py sweep2 new base
log total
