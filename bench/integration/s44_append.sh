#!/usr/bin/env bash
# Session 44: the separate append kernel's cost in a graphed KV-cache decode step on cuda_sm90
# (bench/integration/s44_append.py), on a d128 bf16 build of the tree.
# Prediction: 2-4 us per step (a small kernel and one more kernel boundary), 1-10% of the step.
# One H200 call (~2 minutes).
#   bash bench/integration/s44_append.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44p
PY_DIMS="128" sm90_build_py new "" 16 300
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s44_append.py 2>&1 | grep -v Warning |
  tee "$out/append.jsonl"
log "append rc=$?"
