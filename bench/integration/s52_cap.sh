#!/usr/bin/env bash
# Session 52: the records' cap raised to 32 x 8 x 256 floats (split_kv_plan.h, host only; the kernels those of
# s52_combine3.sh): bench/integration/s52_cap.py's automatic counts beside requested ones (d 128 / 256 bf16).
# Prediction (s52_d256sweep.sh): d256 8/1 16100 keys automatic = 32 pieces ~19.4 us against 23.3 in 16; 16/2
# ~0.9 of 16 pieces; 4000 keys unchanged (15-16 pieces); the d128 row unchanged.
#   bash bench/integration/s52_cap.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52g
PY_DIMS="128;256" sm90_build_py new "" 16 240
rows_ab s52_cap.py cap new
log total
