#!/usr/bin/env bash
# Session 53: s53_sweep.py's requested counts beside the automatic ones on the final kernels (one build). Question
# for the next session: whether the split-count rule (split_kv_plan.h, fitted in session 51 with the first CTA
# summing every row) still picks the fastest count now that the rows' owners sum them in parallel.
#   bash bench/integration/s53_sweep.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s53s
PY_DIMS="128" sm90_build_py new "" 16 300
rows_ab s53_sweep.py sweep new
log total
