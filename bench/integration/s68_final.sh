#!/usr/bin/env bash
# Session 68, verification of the final tree (dropout on the Hopper forward, s68_pairs.patch's drop bits; the
# shared transpose_lane_fields generalised, which cuda_sm80's and cuda_sm90's backward use): the tests and
# extension of every head dim (both dtypes, sm_80 and sm_90a kernels), the forward, varlen and dropout suites, the
# backward's dropout cases, determinism with dropout, Api, robustness; pytest's interface tests; the standard grid's
# forward with dropout 0.1 beside cuda_sm80, SDPA's FA2 and cuDNN (bench/compare.py --dropout 0.1).
#   bash bench/integration/s68_final.sh
# Run (the final tree): build 85 s; suites 270 passed (82 skipped); pytest 99 passed; with dropout 0.1 on all 36
# rows 1.01-1.62x SDPA's FA2, 1.16-2.62x cuDNN, 1.55-1.90x cuda_sm80. Record: s68_final_summary.txt,
# s68_final_dropout.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s68v
tests_and_py_build "32;64;96;128;160;192;224;256"
gtest_suites 'Dropout/ForwardDropoutTest.*cuda*:Grid/ForwardTest.*cuda*:*VarlenTest*cuda*:Grid/BackwardTest.*cuda*dropout*:*DeterminismTest.BackwardDropout*:Api.*:ReferenceForward.Dropout*:*CudaRobustness*' 220
grep -m3 -A10 ': Failure' "$out/tests.log" | cut -c1-200 >>"$out/summary.txt"
py_tests_on_gpu test_interface.py
(PYTHONPATH=$bld/pyroot timeout 150 python3 bench/compare.py --modes fwd --dropout 0.1 --no-decode --ceiling-n 0 \
  --rounds 2 --settle-ms 100 --out "$out" --tag dropout >"$out/dropout.jsonl" 2>"$out/dropout.err")
log "compare dropout rc=$? $(grep -v Warn "$out/dropout.err" | tail -2 | cut -c1-300)"
log total
