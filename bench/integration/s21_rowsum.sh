#!/usr/bin/env bash
# RAN in session 21 on 78c05b8 (H200; s21_rowsum_*): correct, but 0.82 (non-causal) / 0.87 (causal) of the default.
# (Session 22: mostly the unshifted bit-test trigger's extra exact passes, not the GEMMs: s22_rowsum.sh.)
# The switch was removed afterwards: apply s21_rowsum_gemm.patch to 5f7915c's tree to run it again.
# Session 21: FLASHATTN_SM90_ROW_SUM_GEMM_D128=1 (forward_config.h kRowSumGemm): the d = dv = 128 two-consumer
# kernels take their row sums from a separate m64n8k16 GEMM of P against a block of ones beside each P V step,
# and softmax_update_by_sum triggers on a bit test of the packed probabilities (some p >= 2) instead of their
# partial sums. Local SASS (d128 bf16 cluster kernel): FADD 350 -> 142 static, LOP3 79 -> 98, HGMMA 40 -> 56,
# 3872 -> 3736 instructions, loop issue stretch 61 -> 71 instructions (24 HGMMA), spills as the default, no C75xx.
# At the power cap, ~45 fewer instructions per block and warp (12%) against 3% more tensor work: the sign is
# not known (session 5's d64 row sums: +6% on three consumers, 0 on two). Prediction: -1..+2% on the d128 rows.
# One call: d 96 / 128 sm90 suites with the switch (fp16 + bf16; ForwardSpreadTest drives the rescale trigger),
# racecheck on a subset, then the A/B (default, switch, control; d128, two passes). Ask for an H200.
#   bash bench/integration/s21_rowsum.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s21r
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
switch_builds rsg "-DFLASHATTN_SM90_ROW_SUM_GEMM_D128=1" "96;128" "128" 300
rm -f "$out"/py_*_build.log
tests=$bld/tests/tests/flashattn_tests
timeout 100 "$tests" --gtest_filter='*cuda_sm90*:*Sm90*' >"/tmp/s21r-tests.txt" 2>&1
log "sm90 suites rc=$? $(grep -c '^\[       OK' /tmp/s21r-tests.txt) ok $(tail -3 /tmp/s21r-tests.txt | tr '\n' ' ')"
grep -E "FAILED|Failure|error" /tmp/s21r-tests.txt | head -20 >"$out/tests_failures.txt"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 "$tests" \
  --gtest_filter='*ForwardTest*cuda_sm90*128x217*:*ForwardSpread*cuda_sm90*d128*' >"/tmp/s21r-race.txt" 2>&1
log "racecheck rc=$? $(grep -m1 'SUMMARY' /tmp/s21r-race.txt) $(grep -c '^\[       OK' /tmp/s21r-race.txt) ok"
sm90_ctrl_copy
sm90_ab_passes "p1 base,rsg,ctrl;p2 ctrl,rsg,base" "128" 512,1024,2048,4096,8192,16384 60 100
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base rsg ctrl | tee -a "$out/summary.txt"
log total
