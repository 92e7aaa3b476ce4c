#!/usr/bin/env bash
# Prepared in session 22, not run (no device time left): the d64 by-sum softmax (FLASHATTN_SM90_RESCALE_BY_SUM_D64,
# default 1 since session 22: H200 +5..+14%) on an H100, against =0 and a control, two passes over the d64 rows.
# Prediction: +3..+10% (the H100 at these rows is less power-bound than the H200: session 15), causal 512 even.
# Ask for nvidia-h100-x1.
#   bash bench/integration/s23_h100_d64.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s23h
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
default_vs_old 64 "-DFLASHATTN_SM90_RESCALE_BY_SUM_D64=0"
log total
