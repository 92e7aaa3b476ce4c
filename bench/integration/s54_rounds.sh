#!/usr/bin/env bash
# Session 54: large-batch decodes at whole and partial rounds of the static schedule (s54_rounds.py), with SDPA.
# Prediction: ours batch 33 / 32 ~1.00-1.01 and 66 / 64 ~1.00-1.01; cuDNN's ~1.03 both.
#   bash bench/integration/s54_rounds.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54w
PY_DIMS="64;128" sm90_build_py new "" 16 300
log "py build"
rows_ab s54_rounds.py rounds new
log total
