#!/usr/bin/env bash
# Session 44: tensors handed to the extension as they are (python/src/binding.cpp reads their attributes; the
# Python describe() tuples gone: bench/integration/s44_python.patch) against the Python before it, one extension
# build (it still takes the tuple form), one process: the pieces (s44_pieces.py), then the calls
# (s43_ab.py: forward, steps, KV cache, four interleaved rounds); then the Python tests that need a GPU.
# Prediction: the parse of a tensor object in C costs about what describe() did less its Python (locally 0.44
# against 0.64 us per tensor): forward -1..-2 us, steps -2..-5 us, within the spread of a step.
# One H200 call (~4 minutes).
#   bash bench/integration/s44_ab.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44a
PY_DIMS="128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
py_base_from_patch bench/integration/s44_python.patch
PYTHONPATH=$bld/pyroot timeout 150 python3 bench/integration/s44_pieces.py 2>&1 | grep -v Warning |
  tee "$out/pieces.jsonl"
log "pieces rc=$?"
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s43_ab.py 2>&1 | grep -v Warning |
  tee "$out/ab.jsonl"
log "ab rc=$?"
py_tests_on_gpu test_dispatch.py test_interface.py test_compile_and_graphs.py test_modules.py test_errors.py
