#!/usr/bin/env bash
# Session 43: the Python interface's wrapper changes (bench/integration/s43_python.patch: empty_like
# allocations, the route over tensor positions only, the device / backend queries) against the session's
# starting Python, one extension build, one process (bench/integration/s43_ab.py); then each piece again
# (s43_pieces.py) and the Python test files that need a GPU.
# Prediction: forward -2..-4 us, a step -15..-30 us (-3..-8%); SDPA unchanged between rounds.
# One H200 call (~3 minutes).
#   bash bench/integration/s43_ab.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s43a
PY_DIMS="128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
py_base_from_patch bench/integration/s43_python.patch
PYTHONPATH=$bld/pyroot timeout 300 python3 bench/integration/s43_ab.py 2>&1 | grep -v Warning |
  tee "$out/ab.jsonl"
log "ab rc=$?"
PYTHONPATH=$bld/pyroot timeout 100 python3 bench/integration/s43_pieces.py 2>&1 | grep -v Warning |
  tee "$out/pieces.jsonl"
log "pieces rc=$?"
py_tests_on_gpu test_dispatch.py test_interface.py test_compile_and_graphs.py test_modules.py
