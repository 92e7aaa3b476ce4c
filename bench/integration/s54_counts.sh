#!/usr/bin/env bash
# Session 54: requested split counts of the narrow tile's few-tile decodes (s54_counts.py, two passes in opposite
# orders) on session 53's final kernels, to refit split_kv_plan.h's choice between one cluster and two levels.
# Prediction: at 6000-11000 keys over one K/V head, 40-64 pieces (two levels, pieces of 1-2 blocks) 5-10% faster
# than the rule's count; at 4000 and 16100-32000 keys the rule within 2-3% of the best.
#   bash bench/integration/s54_counts.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54c
PY_DIMS="64;128" sm90_build_py new "" 16 300
log "py build"
rows_ab s54_counts.py counts new
S54_ORDER=reverse rows_ab s54_counts.py counts2 new
log total
