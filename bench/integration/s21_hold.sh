#!/usr/bin/env bash
# RAN in session 21 on 291d7c5 (H200; s21_hold_*): correct, 0.996 of the default (control 0.998). The switch was
# removed afterwards: apply s21_hold_turn.patch to 5f7915c's tree to run it again.
# Session 21: FLASHATTN_SM90_HOLD_TURN=1 (consumer.h kHoldTurn): a consumer keeps the issue turn of its tile's last
# P V through the next tile's first S, so the two half-size GEMMs go out back to back and the next tile's first
# softmax hides under the other consumers' turns (s21_tile_split.txt: the boundary costs ~1.4 key blocks per tile
# at d128 non-causal 4k; causal 2k spends a quarter of its samples on tile-level work). Kernels with the early
# next S and no per-consumer key ranges: d64 (two-, three-, four-consumer unmasked), d96 / d128 (dense, paged,
# unmasked multicast). Local SASS: the key-block loop's issue stretch unchanged (d128 62 vs 61 instructions, d64
# identical), no C751x, spills as the default, +350 instructions per kernel (the first S on two paths).
# One call: the sm90 suites for d 64 / 96 / 128 with the switch (fp16 + bf16), racecheck and synccheck on a
# subset, then the A/B (default, switch, control copy of the default; d128 / d64, two passes).
# Prediction: +1-2% at d128 non-causal 2k-4k, +2-5% on the causal rows <= 4k, ~1.00 at 16k. Ask for an H200.
#   bash bench/integration/s21_hold.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s21h
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
switch_builds hold "-DFLASHATTN_SM90_HOLD_TURN=1" "64;96;128" "64;128"
tests=$bld/tests/tests/flashattn_tests
timeout 120 "$tests" --gtest_filter='*cuda_sm90*:*Sm90*' --gtest_brief=1 >"$out/tests.txt" 2>&1
log "sm90 suites rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
for tool in racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" \
    --gtest_filter='*ForwardTest*cuda_sm90*113x203*:*ForwardTest*cuda_sm90*128x217*:*ForwardTest*cuda_sm90*512x2100*' \
    --gtest_brief=1 >"/tmp/s21h-$tool.txt" 2>&1
  log "$tool rc=$? $(grep -m1 'SUMMARY' "/tmp/s21h-$tool.txt") $(grep -c '^\[       OK' "/tmp/s21h-$tool.txt") ok"
done
sm90_ctrl_copy
sm90_ab_passes "p1 base,hold,ctrl;p2 ctrl,hold,base" "128 64" 512,1024,2048,4096,8192,16384 60 100
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base hold ctrl | tee -a "$out/summary.txt"
log total
