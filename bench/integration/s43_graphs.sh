#!/usr/bin/env bash
# Session 43: the graphed training step. tests/python/test_compile_and_graphs.py (new: a make_graphed_callables
# forward + backward replayed on fresh inputs, bitwise the eager call's) and bench/training_step.py again with the
# steps captured as CUDA graphs beside the eager ones, on a d64 / d128 / d256 bf16 build with the backward.
# Prediction: the test passes; graphed, the host-bound rows become GPU-bound for both (ours then below SDPA's by
# its backward, as at the GPU-bound rows: 0.68-0.79x); eager rows as in s43_steps.sh.
# One H200 call (~4 minutes).
#   bash bench/integration/s43_graphs.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s43g
PY_DIMS="64;128;256" sm90_build_py new "" 16 400 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
py_tests_on_gpu test_compile_and_graphs.py test_dispatch.py
PYTHONPATH=$bld/pyroot timeout 300 python3 bench/training_step.py 2>&1 | grep -v Warning |
  tee "$out/steps.jsonl"
log "training_step rc=$?"
