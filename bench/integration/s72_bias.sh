#!/usr/bin/env bash
# Session 72, options.bias (additive score biases and bool masks, batched forward and backward; cuda_sm80's general
# kernels, cuda_sm90 refusing them): a build of head dims 64-256 (both dtypes); the bias and validation suites (every
# bias case on cuda_sm80, the routing test on the Hopper GPU); the Python bias tests; bench/bias_compare.py against
# SDPA's masked backends; then cuda_sm80's own forward / backward suites (its general kernels gained the bias pass)
# and memcheck over the bias cases.
#   bash bench/integration/s72_bias.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s72b
tests_and_py_build "64;96;128;192;256"
gtest_suites '*Bias*:Validation*' 200
cp "$out/tests.log" "$out/bias_tests.log"
py_tests_on_gpu "test_interface.py::test_attn_bias" "test_interface.py::test_attn_bias_errors" test_dispatch.py
(PYTHONPATH=$bld/pyroot timeout 170 python3 bench/bias_compare.py --out "$out/bias.json" >"$out/bias.jsonl" \
  2>"$out/bias.err")
log "bias_compare rc=$?"
grep "^|" "$out/bias.err" >>"$out/summary.txt"
tail -3 "$out/bias.err" | cut -c1-300 >>"$out/summary.txt"
gtest_suites '*cuda_sm80*:-*Random*:*Large*' 150
sanitizer_runs "$tests" '*Bias*cuda_sm80_1[3-6]*:*BiasRouting*' 60 memcheck
log total
