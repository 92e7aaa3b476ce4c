#!/usr/bin/env bash
# Session 55: decodes of more tiles than SMs with requested split counts against the rule's none
# (s55_batches.py), SDPA beside. Prediction: at batch 20-24 (1.2-1.45 rounds) 2-4 pieces read 0.75-0.9 of the
# unsplit time; at batch 32 / 40 (1.94 / 2.4 rounds) no count gains more than ~3%.
#   bash bench/integration/s55_batches.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s55b
PY_DIMS="64;128;256" sm90_build_py new "" 16 300
log "py build"
ROWS_LIMIT=420 rows_ab s55_batches.py batches new
log total
