#!/usr/bin/env bash
# Session 72, the final tree: the bias suites with two cases of the backward's deterministic mode added (d128 causal
# with a bool mask, d64 with an fp32 key-padding bias), on a build of head dims 64 and 128 (the other head dims'
# cases skip, saying so); memcheck and racecheck over the deterministic cases.
#   bash bench/integration/s72_bias6.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s72g
tests_and_py_build "64;128"
gtest_suites '*Bias*' 120
sanitizer_runs "$tests" '*BiasBackwardTest*cuda_sm80*_det' 60 memcheck racecheck
log total
