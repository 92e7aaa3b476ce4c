#!/usr/bin/env bash
# Session 55: split_kv_tail's margin past two whole rounds (s55_margin.py), the tree against the same tree built
# with -DFLASHATTN_SM90_SPLIT_KV_TAIL=0, two passes. Prediction: 4096 keys at 42 / 44 sequences now unsplit,
# 0.99-1.01; the rows that split 0.90-0.98 as in s55_sweep.sh; 16384 keys at 42-45 (still split) 0.95-1.00.
#   bash bench/integration/s55_margin.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s55m
PY_DIMS="128" sm90_build_py base "-DFLASHATTN_SM90_SPLIT_KV_TAIL=0" 8 200 &
PY_DIMS="128" sm90_build_py new "" 8 200
wait
log builds
ROWS_LIMIT=120 rows_ab s55_margin.py margin base new
ROWS_LIMIT=120 rows_ab s55_margin.py margin2 new base
log total
