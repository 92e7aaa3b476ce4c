#!/usr/bin/env bash
# Session 68, verification of the final tree after s68_keys.sh (the key schedule in every CUDA dropout kernel, which
# that call ran at d 64 / 128 / 256 only): every head dim built (both dtypes, sm_80 and sm_90a kernels), every CUDA
# dropout case of the forward, varlen, backward, drawn-backward and determinism suites, the dropout suite, Api;
# memcheck over cuda_sm80's dropout forward cases; pytest's interface tests.
#   bash bench/integration/s68_final2.sh
# Run (the final tree): build 67 s; 97 dropout cases passed (41 skipped: CPU backends, capability); memcheck clean over
# 8 cuda_sm80 dropout forward cases; pytest's interface tests 99 passed. Record: s68_final2_summary.txt.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s68w
tests_and_py_build "32;64;96;128;160;192;224;256"
gtest_suites '*cuda*dropout*:Random/BackwardRandomTest.*cuda*:Dropout/ForwardDropoutTest.*cuda*:*DeterminismTest.BackwardDropout*:Api.*' 150
grep -m3 -A10 ': Failure' "$out/tests.log" | cut -c1-200 >>"$out/summary.txt"
sanitizer_runs "$tests" 'Grid/ForwardTest.*cuda_sm80*dropout*' 60 memcheck
py_tests_on_gpu test_interface.py
log total
