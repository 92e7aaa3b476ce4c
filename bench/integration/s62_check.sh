#!/usr/bin/env bash
# Session 62, after s62_final.sh: the launch helper shared by both backward kernels (host code) and comments:
# the cuda_sm90 backward suites of all three head dims, the determinism cases, Api, and pytest's interface tests.
#   bash bench/integration/s62_check.sh
# (Run on 5f94f64: suites 77 passed, pytest interface 60 passed.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62i
tests_and_py_build "64;128;256" || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda*:Api.*' 150
py_tests_on_gpu test_interface.py
log total
