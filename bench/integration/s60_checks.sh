#!/usr/bin/env bash
# Prepared in session 59 (not yet run): what changed after session 59's device time. Api.Sm90BackwardRouting
# (the automatic choice of a backward on a Hopper GPU) with the Api suite; the backward kernels' zeroed rows
# through the shared ptx::zero_rows_128b and their LSE / D loads through ptx::ld_shared_v2_f32 (local SASS: the
# step loop moved by a few instructions), so the cuda_sm90 backward cases, drawn ones and the sanitizers.
#   bash bench/integration/s60_checks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60c
tests_and_py_build "64;128"
first_cases 'Api.*' 40 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:Grid/BackwardTest.*cuda_sm90_*_d64_*:-*1023x1024*' 240 \
  racecheck memcheck
log total
