#!/usr/bin/env bash
# Session 22: the fused d128 row sums (FLASHATTN_SM90_ROW_SUM_D128, now default 1) on an H100: the previous
# default (=0), the new one and a control, two passes over the d128 rows. The H200 gain (+1.2%) came from fewer
# instructions at the power cap; the H100 (less power-bound at these rows, session 15) may see the +3% tensor work
# instead. Prediction: -1..+1%. Ask for an H100.
#   bash bench/integration/s22_rowsum_h100.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s22h
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
default_vs_old 128 "-DFLASHATTN_SM90_ROW_SUM_D128=0"
log total
