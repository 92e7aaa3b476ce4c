#!/usr/bin/env bash
# Session 67, last device time: cuda_sm80's general backward kernel with softcap / ALiBi as template arguments
# chosen once a pass (four forms, s67_sm80_general.patch), the form that made the Hopper general kernels
# 0.69-0.91x the time (s67_general.sh). On the H200 (its sm_90 SASS of the sm_80 kernels; no A100 is lent):
# cuda_sm80's backward grid cases, then dropout 0.1 and softcap 30 at d64 / d128, 1k and 8k, against the tree
# before (flashattn_base). Predicted 0.85-0.95x the time; local ptxas: spills d128 288 bytes (284 before).
#   bash bench/integration/s67_sm80_general.sh
# Run (the patch applied, on the tree of its commit): cuda_sm80's grid and drawn cases at d64 / d128 51 passed
# (softcap, ALiBi, dropout among them). Dropout 0.865-0.900x the time, softcap 0.784-0.839x: kept. (The other
# head dims' kernels, the same code, were compiled, not run: the session's device time ended here.) Record:
# s67_sm80_general_summary.txt, s67_sm80_general_dropout.jsonl, s67_sm80_general_softcap.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67m
tests_and_base_around_patch bench/integration/s67_sm80_general.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm80*:Random/BackwardRandomTest.*cuda_sm80*' 60
for mods in "--dropout 0.1" "--softcap 30"; do
  name=$(echo "$mods" | tr -d ' -.')
  # shellcheck disable=SC2086  # $mods: two words
  backward_compare_vs_base "sm80_$name" 60 --hdims 64,128 --seqlens 1024,8192 $mods --rounds 2 \
    --settle-ms 60 --check-max-seqlen 0 --backends cuda_sm80 --base-backends cuda_sm80
done
log total
