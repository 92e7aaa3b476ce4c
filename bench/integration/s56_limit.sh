#!/usr/bin/env bash
# Session 56: the kernel of two CTAs a SM over 4096-12000 keys (s56_limit.py), the tree built with
# -DFLASHATTN_SM90_TWO_CTAS_MAX_SEQLEN=20000 against -DFLASHATTN_SM90_TWO_CTAS_PER_SM=0, two passes.
# Prediction: 4096 (a capacity of 4352) 0.97-0.99 as in s56_two.sh; 8192 0.98-1.01; 12000 1.00-1.03; ragged
# 8192 1.00-1.05.
#   bash bench/integration/s56_limit.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s56l
PY_DIMS="64;128" sm90_build_py base "-DFLASHATTN_SM90_TWO_CTAS_PER_SM=0" 8 200 &
PY_DIMS="64;128" sm90_build_py new "-DFLASHATTN_SM90_TWO_CTAS_MAX_SEQLEN=20000" 8 200
wait
log builds
ROWS_LIMIT=150 rows_ab s56_limit.py limit base new
ROWS_LIMIT=150 rows_ab s56_limit.py limit2 new base
log total
