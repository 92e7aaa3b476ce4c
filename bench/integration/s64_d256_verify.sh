#!/usr/bin/env bash
# Session 64, call 4: STAGED_KEY_STORE at d256 too (each consumer's dK / dV columns staged in K's and V's
# buffers, TMA stores), against the tree with the switch off (every head dim's kernels then store from
# registers), then the final tree's checks: the cuda_sm90 backward's first cases, every CUDA backward grid
# case, drawn and determinism cases, Api and robustness, pytest's interface tests, synccheck and racecheck over
# the cuda_sm90 backward grid cases of every head dim. Predicted at d256: 0.90-0.97x the time at 512-1k,
# 0.97-0.99x from 4k.
#   bash bench/integration/s64_d256_verify.sh
# (Run in session 64 on d07891f: d256 0.914 / 0.981 / 0.998 / 0.989x the time non-causal at 512 / 1k / 4k / 16k,
# causal 0.903 / 0.931 / 1.003 / 1.009; 1.01-1.24x cuDNN on all eight rows. Suites 143 passed, pytest 60 passed,
# synccheck and racecheck clean over 42 cases. Kept.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s64d
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_BWD_STAGED_KEY_STORE=0" -DFLASHATTN_BACKWARD=ON
backward_sm90_first_cases 150
backward_compare_vs_base d256_staged_vs_base 120 --hdims 256 --seqlens 512,1024,4096,16384 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
py_tests_on_gpu test_interface.py
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
cp "$out/pytest.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
