#!/usr/bin/env bash
# Prepared in session 59 (not yet run): Api.Sm90BackwardRouting, added after session 59's device time (the
# automatic choice of a backward on a Hopper GPU), with the Api suite and the cuda_sm90 backward cases beside it.
#   bash bench/integration/s60_checks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60c
tests_and_py_build "64;128"
first_cases 'Api.*' 40 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*' 200
log total
