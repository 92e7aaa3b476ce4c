#!/usr/bin/env bash
# Session 72, options.bias joining S's accumulators before the GEMM where there is no softcap (forward_kernel.h,
# backward_kernel.h kBias: the loads' latency under S = Q K^T, no registers of their own): the bias suites, the
# Python bias tests, bench/bias_compare.py (with cuda_sm80's plain kernel beside: what the bias costs on the
# family it runs on), memcheck and racecheck over bias cases.
#   bash bench/integration/s72_bias4.sh   (measured, not kept: the patch is s72_bias_in_accumulators.patch; the result in
#   s72_bias4_summary.txt: forward level or lower, the fp32 bias's backward 0.5x)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s72e
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
