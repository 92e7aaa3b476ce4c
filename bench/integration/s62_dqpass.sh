#!/usr/bin/env bash
# Session 62: the d = 256 backward's dQ pass (backward_dq_kernel.h; FLASHATTN_SM90_BWD_D256_DQ_PASS=1, the
# tree's default): the main kernel computes dK / dV only, a second kernel dQ per 128 query rows, written once.
# Base: the same tree built with DQ_PASS=0 (session 61's atomics, package flashattn_base). Predicted: 1.1-1.25x
# the speed of the atomics (more at 16k than at 1k); deterministic mode at d256 now cuda_sm90's, the same
# kernels. Then the d256 grid, drawn and determinism cases, the sm90 backward suites and Api, and racecheck
# over the d256 grid cases.
#   bash bench/integration/s62_dqpass.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62a
tree_and_flag_base "256" "-DFLASHATTN_SM90_BWD_D256_DQ_PASS=0" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d256_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*D256*' 120 ||
  exit 1
backward_compare_vs_base dqpass 200 --hdims 256 --seqlens 1024,4096,16384 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90,cuda_sm90:det --base-backends cuda_sm90
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*:Api.*:*Edge*' 120
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*dropout*:*2048x2048*' 120 racecheck
log total
