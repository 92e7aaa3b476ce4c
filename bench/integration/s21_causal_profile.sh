#!/usr/bin/env bash
# Session 21: PC samples of the d128 kernel at causal 2k (FA3 anchor 0.950 normalised, the d128 row furthest
# below it), per SASS instruction, to set beside s21_tile_split.txt (non-causal 4k / 16k): how much of a causal
# tile (8.5 key blocks on average, the diagonal one masked) goes to the per-tile instructions. Per-tile
# instructions execute tiles x consumer warps = 16384 times here. Ask for an H200.
#   bash bench/integration/s21_causal_profile.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s21c
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
sm90_build_py new "-lineinfo" 12 300
rm -f "$out"/py_*_configure.log
sass_profile 128:1:2048 causal_2048
log total
