#!/usr/bin/env bash
# Session 63, SKIP_HIDDEN's third form: the second (s63_skip2.patch, its buffers fixed) with the consumer index
# taken from a shuffle of a constant lane, so that the walk's bounds, the ring position derived from them and
# the GEMM descriptors stay on the uniform datapath (the second form's loop had 63 R2UR against the tree's 33,
# local cuobjdump; this one 0). Beside the tree without it (package flashattn_base). Predicted: causal
# 0.90-0.95x at 512-1k, level without a mask (the second form read 1.07-1.09 there). The d64 tests run on it,
# then synccheck and racecheck over the d64 grid cases.
#   bash bench/integration/s63_skip3.sh
# (Run in session 63: the d64 cases (34) passed, racecheck clean, synccheck reported the passed steps at the
# zeroing barrier (a second instruction); causal 0.919 / 0.915x, non-causal 1.035 / 1.047x: not kept. Records:
# s63_skip3.jsonl, s63_skip3_summary.txt.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s63g
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_SKIP_HIDDEN=1" tree_and_flag_base "64" "" -DFLASHATTN_BACKWARD=ON
first_cases 'Grid/BackwardTest.*cuda_sm90_*_d64_*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*' \
  60 || exit 1
backward_compare_vs_base skip3 70 --hdims 64 --seqlens 512,1024,2048 --rounds 2 --settle-ms 100 \
  --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d64_*:-*dropout*' 40 synccheck racecheck
log total
