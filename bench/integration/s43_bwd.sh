#!/usr/bin/env bash
# Session 43: where the host time of an eager forward + backward step goes (bench/integration/s43_bwd_diag.py)
# on a d128 build with the backward, then bench/python_overhead.py beside it.
# Prediction: the stub Function's step costs SDPA's or less; if the device thread's GIL handoff is the
# excess, the steps with the engine's threads off read far lower and the timeline's call_to_entry /
# exit_to_return carry most of it; else the backward's own Python (entry_to_bwd, bwd) does.
# One H200 call (~3 minutes).
#   bash bench/integration/s43_bwd.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s43b
PY_DIMS="128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s43_bwd_diag.py 2>&1 | grep -v Warning |
  tee "$out/bwd_diag.jsonl"
log "bwd_diag rc=$?"
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/python_overhead.py --calls 2000 2>&1 | grep -v Warning |
  tee "$out/python_overhead.jsonl"
log "python_overhead rc=$?"
