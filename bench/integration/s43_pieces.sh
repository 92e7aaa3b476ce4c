#!/usr/bin/env bash
# Session 43: each piece of an eager forward + backward step timed alone on the GPU's host
# (bench/integration/s43_pieces.py), on a d128 build with the backward.
# Prediction: the pieces that touch CUDA (allocations, the extension's launches, the gradient copy) are
# several times their CPU-machine cost and carry most of the step's excess over SDPA.
# One H200 call (~2 minutes).
#   bash bench/integration/s43_pieces.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s43p
PY_DIMS="128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s43_pieces.py 2>&1 | grep -v Warning |
  tee "$out/pieces.jsonl"
log "pieces rc=$?"
