#!/usr/bin/env bash
# Session 44: no workspace for cuda_sm90's static schedule without a split tail (src/, s44_workspace.patch), so
# an unmasked batched forward makes no workspace allocation through the Python callback: the tree's extension
# (flashattn) against the same tree with the patch reversed (flashattn_base), one process, s43_ab.py's calls
# (four interleaved rounds; the causal / KV-cache calls are controls: they keep their workspace), then the
# Python tests on the new build.
# Prediction: forward calls -2..-3 us (the callback's allocation, 2.5 us in s44_pieces), the KV-cache call and
# the steps' backward unchanged.
# One H200 call (~4 minutes).
#   bash bench/integration/s44_ws.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44w
py_builds_around_patch bench/integration/s44_workspace.patch -DFLASHATTN_BACKWARD=ON
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s43_ab.py 2>&1 | grep -v Warning |
  tee "$out/ab.jsonl"
log "ab rc=$?"
py_tests_on_gpu test_dispatch.py test_interface.py test_compile_and_graphs.py test_modules.py test_errors.py \
  test_binding.py
