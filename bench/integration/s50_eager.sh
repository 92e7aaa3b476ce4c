#!/usr/bin/env bash
# Session 50 (issue 6): the host cost of the cluster combine's occupancy query in an eager decode loop
# (s50_eager.py) on the final tree's extension (d128, bf16).
# Prediction: the loop is host-bound (~15-25 us per call); num_splits 8 / 0 within ~1-3 us of 12 (a driver query
# that reads cached attributes).
#   bash bench/integration/s50_eager.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s50e
PY_DIMS=128 sm90_build_py new "" 16 200
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 100 python3 s50_eager.py) 2>&1 | grep -v Warning |
  tee -a "$out/summary.txt"
log total
