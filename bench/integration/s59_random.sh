#!/usr/bin/env bash
# Session 59: the drawn backward cases (Random/BackwardRandomTest) on both CUDA backends under three seeds,
# then ncu's time of each kernel of one backward call (cuda_sm80's preprocess and postprocess around
# cuda_sm90's main kernel) at d64 / d128, 512 / 2048 tokens, causal and not.
#   bash bench/integration/s59_random.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s59r
tests_and_py_build "64;128"
for seed in 101 202 303; do
  FLASHATTN_TEST_SEED=$seed gtest_suites 'Random/BackwardRandomTest.*cuda*' 150
  grep -E "drawn_case|Failure|FAILED" "$out/tests.log" | head -5 >>"$out/summary.txt"
done
ncu_backward_times 64,128 512,2048  # (session 59 ran it with ncu's default clock control)
log total
