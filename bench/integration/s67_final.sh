#!/usr/bin/env bash
# Session 67, verification of the final kernels (dropout on the Hopper backward, the general kernels' modifiers
# per step, cuda_sm80's shared drop bits): the tests and extension of every head dim (both dtypes, sm_80 and
# sm_90a kernels: cuda_sm80's dropout cases at d 40 / 72 / 96 / 192 / 256, whose query columns per warp differ,
# were not built by s67_bits.sh), every CUDA backward suite, memcheck over both backends' dropout cases, pytest's
# interface tests on the GPU.
#   bash bench/integration/s67_final.sh
# Run (the session's final kernels): build 76 s (16 cores), suites 199 passed (39 skipped), memcheck clean over 24
# dropout cases of both backends, pytest's interface tests 99 passed (1 skipped). Record: s67_final_summary.txt.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67v
tests_and_py_build "32;64;96;128;160;192;224;256"
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 240
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda*dropout*:*DeterminismTest.BackwardDropout*cuda*' 200 memcheck
py_tests_on_gpu test_interface.py
log total
