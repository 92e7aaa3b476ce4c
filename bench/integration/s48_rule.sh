#!/usr/bin/env bash
# Session 48 (issue 6): does the split count (split_kv_plan.h, fitted on the 64-row tile in session 45) still fit
# the narrow tile at d64 / d96 / d128 now that its combine of 2-4-row tiles takes one round trip
# (combine_narrow_pieces)? s46_dims_rule.py's narrowall rows (d128 / d64 32/8, d96 MHA over 1k-16k keys at batch
# 1 / 4; d128 64/8 at batch 1; d128 / d64 MQA at 16k keys) with the automatic count and num_splits 1-64, on the
# tree's extension. Prediction: auto within 1.05 of the best count on most rows; 16k-key rows of few tiles may now
# prefer more pieces than before (session 47: d64 1k b4 best without a split).
#   bash bench/integration/s48_rule.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s48r
PY_DIMS="64;96;128" sm90_build_py new "" 16 300
split_sweep narrowall 200 rule
log total
