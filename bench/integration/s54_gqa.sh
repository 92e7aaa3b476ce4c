#!/usr/bin/env bash
# Session 54: requested split counts of GQA 32/8 decodes at 8k-32k keys (s54_gqa.py, two passes) on the tree's
# kernels, where the 8 tiles' clusters above 9 CTAs do not all fit at once.
# Prediction: d64 at 16k keys batch 1 in 16 pieces on the arrival counter 10-15% faster than the automatic 8.
#   bash bench/integration/s54_gqa.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54g
PY_DIMS="64;128;256" sm90_build_py new "" 16 300
log "py build"
rows_ab s54_gqa.py gqa new
rows_ab s54_gqa.py gqa2 new
log total
