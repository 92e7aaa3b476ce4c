#!/usr/bin/env bash
# Session 43: the argument checks' fast path (bench/integration/s43_python2.patch) against the Python before it,
# one extension build, one process (bench/integration/s43_ab.py, with its KV-cache case); then the Python tests
# that need a GPU.
# Prediction: forward calls -2..-3 us (one check), the KV-cache call with append -4..-6 (two); steps within noise.
# One H200 call (~3 minutes).
#   bash bench/integration/s43_ab2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s43c
PY_DIMS="128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
py_base_from_patch bench/integration/s43_python2.patch
PYTHONPATH=$bld/pyroot timeout 300 python3 bench/integration/s43_ab.py 2>&1 | grep -v Warning |
  tee "$out/ab.jsonl"
log "ab rc=$?"
py_tests_on_gpu test_dispatch.py test_interface.py test_compile_and_graphs.py test_modules.py test_errors.py
