#!/usr/bin/env bash
# Prepared in session 58 (not yet run): the host-side changes that landed after session 58's device time, on
# the GPU. The C++ API's refusal of CUDA tensors of a non-current device (Api.CudaTensorsOfAnotherDeviceRefused,
# which skips without a GPU; every other Api case and every GPU suite passes that check on device 0), the
# decode / forward suites of cuda_sm90 and pytest's interface and dispatch files (the Python package sets the
# tensors' device before it calls in).
#   bash bench/integration/s59_checks.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s59c
tests_and_py_build "64;128"
first_cases 'Api.*' 40 || exit 1
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*Forward*cuda_sm90*:*Validation*:*EdgeCases*' 240
py_tests_on_gpu test_interface.py test_dispatch.py
log total
