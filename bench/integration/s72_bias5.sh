#!/usr/bin/env bash
# Session 72, the kept options.bias kernels (kBias instances of cuda_sm80's general kernels) with each lane's bias
# elements loaded one by one again (the pair loads of s72_bias3.sh removed: at d64 the forward read 20-25% below
# s72_bias2.sh's scalar loads): the bias suites, the Python bias tests, bench/bias_compare.py, memcheck and racecheck
# over bias cases.
#   bash bench/integration/s72_bias5.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s72f
tests_and_py_build "64;96;128;192;256"
gtest_suites '*Bias*' 200
py_tests_on_gpu "test_interface.py::test_attn_bias" "test_interface.py::test_attn_bias_errors"
(PYTHONPATH=$bld/pyroot timeout 150 python3 bench/bias_compare.py --seqlens 512 4096 --out "$out/bias.json" \
  >"$out/bias.jsonl" 2>"$out/bias.err")
log "bias_compare rc=$?"
grep "^|" "$out/bias.err" >>"$out/summary.txt"
tail -3 "$out/bias.err" | cut -c1-300 >>"$out/summary.txt"
sanitizer_runs "$tests" '*Bias*Test.MatchesReference/cuda_sm80_1*:*Bias*Test.MatchesReference/cuda_sm80_2*' 90 memcheck racecheck
log total
