#!/usr/bin/env bash
# Session 63, the final tree (STAGES3 at d64 and OWN_FIRST at d256 on; SKIP_HIDDEN not kept; a __syncwarp
# before the zeroing's aligned barrier): every CUDA backward grid case, the drawn and determinism cases, Api and
# the robustness suites, pytest's interface tests, then synccheck and racecheck over the cuda_sm90 backward
# grid cases of every head dim.
#   bash bench/integration/s63_verify.sh
# (Run in session 63 on f90df0b: 141 passed, pytest 60 passed, synccheck and racecheck clean over 42 cases.
# Record: s63_verify_summary.txt.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s63v
tests_and_py_build "64;128;256" || exit 1
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
py_tests_on_gpu test_interface.py
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
cp "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
