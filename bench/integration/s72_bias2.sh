#!/usr/bin/env bash
# Session 72, options.bias with the loads of a pass issued back to back (ScoreBias::visit_kind: one branch on the
# bias's kind a pass, not one an element; the backward's before its S^T / dP^T GEMMs): the bias suites and the
# Python bias tests; bench/bias_compare.py against SDPA's masked backends; cuda_sm80's forward, backward and
# dropout grids (its general kernels gained the bias pass); memcheck over bias cases.
#   bash bench/integration/s72_bias2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s72c
tests_and_py_build "64;96;128;192;256"
gtest_suites '*Bias*' 200
cp "$out/tests.log" "$out/bias_tests.log"
py_tests_on_gpu "test_interface.py::test_attn_bias" "test_interface.py::test_attn_bias_errors"
(PYTHONPATH=$bld/pyroot timeout 120 python3 bench/bias_compare.py --seqlens 512 4096 --out "$out/bias.json" \
  >"$out/bias.jsonl" 2>"$out/bias.err")
log "bias_compare rc=$?"
grep "^|" "$out/bias.err" >>"$out/summary.txt"
tail -3 "$out/bias.err" | cut -c1-300 >>"$out/summary.txt"
gtest_suites 'Grid/ForwardTest*cuda_sm80*:Grid/BackwardTest*cuda_sm80*:*Dropout*cuda_sm80*' 240
sanitizer_runs "$tests" '*Bias*Test.MatchesReference/cuda_sm80_1*' 70 memcheck
log total
