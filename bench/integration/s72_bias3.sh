#!/usr/bin/env bash
# Session 72, options.bias in kernel instances of its own (forward_kernel / backward_kernel kBias: the other general
# kernels as before, their spills back to session 71's), an even key's pair of bias elements one load: the bias
# suites; the Python tests of the interface on the GPU; bench/bias_compare.py against SDPA's masked backends (with
# the general kernel's own cost beside); cuda_sm80's forward, backward and dropout grids; memcheck and racecheck
# over bias cases.
#   bash bench/integration/s72_bias3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s72d
tests_and_py_build "64;96;128;192;256"
gtest_suites '*Bias*' 200
cp "$out/tests.log" "$out/bias_tests.log"
py_tests_on_gpu test_interface.py test_dispatch.py
(PYTHONPATH=$bld/pyroot timeout 120 python3 bench/bias_compare.py --seqlens 512 4096 --out "$out/bias.json" \
  >"$out/bias.jsonl" 2>"$out/bias.err")
log "bias_compare rc=$?"
grep "^|" "$out/bias.err" >>"$out/summary.txt"
tail -3 "$out/bias.err" | cut -c1-300 >>"$out/summary.txt"
gtest_suites 'Grid/ForwardTest*cuda_sm80*:Grid/BackwardTest*cuda_sm80*:*Dropout*cuda_sm80*' 240
sanitizer_runs "$tests" '*Bias*Test.MatchesReference/cuda_sm80_1*' 70 memcheck racecheck
log total
