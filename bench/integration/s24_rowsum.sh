#!/usr/bin/env bash
# Session 24: the d128 row sums in the P V GEMM (session 22, kRowSumFused) at short rows. The H100 grid of this
# session (compare-20261128-060136-fwd-h100) reads d128 512 below session 19's (non-causal 464 -> 440, causal
# 295 -> 275); session 22 read the fused sums 0.96-1.02 at 512 on the H200 and 0.967 at 512 on the H100 (one
# pass). FLASHATTN_SM90_ROW_SUM_D128=2 keeps the fused sums in the K/V multicast (cluster) instances only, so the
# non-causal rows under 2k and the causal ones under 8k go back to the sums in the softmax. Prediction: H100
# 512 +3..+6%, 1k-4k -1..+2%; H200 512 +0..+3%. Three passes, d128 512-4k (the rows where the two differ), beside a
# control. Run on either card (once with nvidia-h100-x1, once with nvidia-h200).
#   bash bench/integration/s24_rowsum.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24r
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS=128 sm90_build_py base "" 8 300 &
PY_DIMS=128 sm90_build_py rs2 "-DFLASHATTN_SM90_ROW_SUM_D128=2" 8 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy
sm90_ab_passes "p1 base,rs2,ctrl;p2 ctrl,rs2,base;p3 rs2,base,ctrl" 128 512,1024,2048,4096 60 100
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base rs2 ctrl | tee -a "$out/summary.txt"
log total
