#!/usr/bin/env bash
# Session 15, first device call (issue 6; the sm80 refactor of eb22bfc), on 7573680 + this script:
#  1. the sm80 suites (bf16, d 64/128/256, sm80 kernels compiled for 90a) on eb22bfc's OnlineSoftmax refactor
#     (update / update_all sharing thread_row_max / fold_row), which session 14 could not run on a GPU;
#  2. s15_d64rowsum.sh's A/B: the three-consumer d64 kernel's row sums in the softmax (ROW_SUM_MMA_THREE=0, "s3");
#     predicted +0.5-1.5% at non-causal 8k / 16k, 4k and causal 16k (four consumers, unmoved) within the control;
#  3. d256 causal: our causal 16k reads 0.954 of our non-causal 8k (same key blocks per tile on average) where FA3
#     reads 0.993; two switches of the masked path: per-consumer key ranges off ("kr0", CONSUMER_KEY_RANGE=0;
#     measured a gain at 512-2k in session 9, never at long rows) and the bit-mask score mask ("mf2",
#     MASK_FORM_OTHER=2; d128 takes it, d >= 192 never timed). Predicted: each within +-1.5%;
#  4. d128: EARLY_NEXT_S=2 (the next tile received during the last P V; one run in session 4b read +2% at >= 2k,
#     -0.4..-1.7% at <= 1k, never measured since) on non-causal 2k / 4k / 16k and causal 4k / 16k. Predicted
#     within +-1%.
#   bash bench/integration/s15_first.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s15a
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="64;128;256" sm90_build_py base "" 6 400 &
PY_DIMS=64 sm90_build_py s3 "-DFLASHATTN_SM90_ROW_SUM_MMA_THREE=0" 3 400 &
PY_DIMS=256 sm90_build_py kr0 "-DFLASHATTN_SM90_CONSUMER_KEY_RANGE=0" 3 400 &
PY_DIMS=256 sm90_build_py mf2 "-DFLASHATTN_SM90_MASK_FORM_OTHER=2" 3 400 &
PY_DIMS=128 sm90_build_py ens2 "-DFLASHATTN_SM90_EARLY_NEXT_S=2" 3 400 &
test_build . "64;128;256" bf16 "" 4 &
wait
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
tests=$bld/tests/tests/flashattn_tests
timeout 150 "$tests" --gtest_filter='*cuda_sm80*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "sm80 suites rc=$? $(tail -2 "$out/tests.txt" | tr '\n' ' ')"
sm90_ctrl_copy
for pass in "p1 base,X,ctrl" "p2 ctrl,X,base"; do
  set -- $pass
  sm90_ab "$1" "${2/X/s3}" 64 0 4096,8192,16384 60 150
  sm90_ab "$1" "${2/X/s3}" 64 1 16384 60 100
  sm90_ab "$1" "${2/X/kr0,mf2}" 256 1 2048,4096,8192,16384 60 150
  sm90_ab "$1" "${2/X/kr0,mf2}" 256 0 8192 60 100
  sm90_ab "$1" "${2/X/ens2}" 128 0 2048,4096,16384 60 150
  sm90_ab "$1" "${2/X/ens2}" 128 1 4096,16384 60 100
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base s3 kr0 mf2 ens2 ctrl | tee -a "$out/summary.txt"
log total
