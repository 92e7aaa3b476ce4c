#!/usr/bin/env bash
# Session 21: FLASHATTN_SM90_EARLY_NEXT_S=2 (consumer.h kEarlyNextTile: the next tile's index, Q wait and decoding
# between the last P V's issue and its wait) against the default 1, on today's kernels. Session 4b measured it once
# (+2% at >= 2k keys, -0.4 / -1.7% at <= 1k, d64 / d128); s21_tile_split.txt puts the next tile's receive and
# decode (127 instructions, 607 samples per 16384 warp-tiles at 4k) on the consumer's path between the last
# P V's completion and the next first S, where =2 moves it under the P V. Prediction: +0.5-1.5% on the d128 /
# d64 rows from 2k, +-1% at 512 / 1k. d256 has no early S (O in Q's buffer): not built. Ask for an H200.
#   bash bench/integration/s21_early_tile.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s21e
out=${OUT:-$out} # results straight to $OUT (fewer than eight files: a call returns no more)
PY_DIMS="64;128" sm90_build_py base "" 8 400 &
PY_DIMS="64;128" sm90_build_py ent2 "-DFLASHATTN_SM90_EARLY_NEXT_S=2" 8 400 &
wait
rm -f "$out"/py_*_configure.log
sm90_ctrl_copy
sm90_ab_passes "p1 base,ent2,ctrl;p2 ctrl,ent2,base" "128 64" 512,1024,2048,4096,8192,16384 60 100
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ent2 ctrl | tee -a "$out/summary.txt"
log total
