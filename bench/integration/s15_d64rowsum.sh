#!/usr/bin/env bash
# PREPARED in session 14 (issue 6), not run (the session's device time was spent): the three-consumer d64 kernel
# (non-causal from 8k queries, 192 x 128 since session 14) with its row sums in the softmax instead of the P V
# GEMM (FLASHATTN_SM90_ROW_SUM_MMA_THREE=0), now that the four-consumer kernel has its own switch
# (FLASHATTN_SM90_ROW_SUM_MMA_FOUR; before, ROW_SUM_MMA_THREE=0 moved both). s14_d64n128.sh's n128s column (both
# kernels moved) read +4.5 / +4.2% at 8k / 16k against +3.3 / +3.5% with the sums on the tensor cores, and -4.4% at
# 4k (the four-consumer kernel). Locally (nvcc 13.0): no spills beyond base's 4 B, no C75xx; the default build's
# SASS is identical to the commit before the split.
# Builds (d64 bf16): base, s3 (=0), a control; non-causal 4k (four consumers, unmoved: noise), 8k, 16k and causal 16k
# (four consumers: noise), three passes beside cuDNN; a test build with =0 runs the sm90 suites and racecheck on the
# three-consumer cases.
# Prediction: s3 +0.5-1.5% at 8k / 16k, the other rows within the control.
#   bash bench/integration/s15_d64rowsum.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s15r
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS=64 sm90_build_py base "" 5 300 &
PY_DIMS=64 sm90_build_py s3 "-DFLASHATTN_SM90_ROW_SUM_MMA_THREE=0" 5 300 &
test_build . 64 "fp16;bf16" "-DFLASHATTN_SM90_ROW_SUM_MMA_THREE=0" 5 &
wait
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
for pass in "p1 base,s3,ctrl" "p2 ctrl,s3,base" "p3 s3,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 64 0 4096,8192,16384 60 150
  sm90_ab "$1" "$2" 64 1 16384 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base s3 ctrl | tee -a "$out/summary.txt"
suites_and_racecheck '*cuda_sm90*:-*GarbageIndices*' '*cuda_sm90*8193x300*:*cuda_sm90*8200x333*:*Spread*cuda_sm90*8192x768*'
log total
