#!/usr/bin/env bash
# Session 64, call 2. (1) The tree with the warp-uniform consumer index (99c519d): every CUDA backward grid case,
# the drawn and determinism cases, Api and robustness, pytest's interface tests, synccheck and racecheck over the
# cuda_sm90 backward grid cases. (2) In parallel, the diagnostic trace (s64_bwd_trace.patch on a copy of the
# tree, its extension at d64 / d128): s64_trace_driver.py's rows (d128 / d64, 512 / 2048, causal or not, three
# calls each), read by bench/backward_trace.py: where a short call's main-kernel time goes (the tile boundary:
# K / V wait, the dK / dV stores; the steps' phases).
#   bash bench/integration/s64_verify_trace.sh
# (Run in session 64 on 99c519d: backward suites, Api, robustness 143 passed, pytest 60 passed, synccheck and
# racecheck clean over 42 cases. The trace's d64 two-consumer rows were lost (one call counter per kernel
# instantiation overwrote the files; s64_bwd_trace2.patch counts per process); the d128 2k rows read the dK / dV
# stores at 6.75 us a tile persistent, 4.7 us causal.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s64v
tree_copy "$bld/trace-tree" bench/integration/s64_bwd_trace.patch || exit 1
(cd "$bld/trace-tree" && PY_DIMS="64;128" sm90_build_py trace "" 4 400 -DFLASHATTN_BACKWARD=ON) &
tests_and_py_build "64;128;256" || exit 1
wait
backward_trace_rows
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
py_tests_on_gpu test_interface.py
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
cp "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
