#!/usr/bin/env bash
# Session 54: the decode standing against SDPA's cuDNN and FlashAttention 2 (s54_standing.py, session 53's final
# kernels, one build), then the requested counts around one K/V head's 6000-11000 keys (S54_ROWS=sweep).
# Prediction: GQA 32/8 d128 at or ahead of cuDNN from batch 1 to 8 at 1-4k keys, level (0.97-1.03) from 16k keys
# and batch 16; d64 the weakest (cuDNN 1.0-1.1x faster at batch 1-4); d256 1.2-1.4x faster than cuDNN.
#   bash bench/integration/s54_standing.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54t
PY_DIMS="64;128;256" sm90_build_py new "" 16 300
log "py build"
rows_ab s54_standing.py standing new
S54_ROWS=sweep rows_ab s54_standing.py sweep new
log total
