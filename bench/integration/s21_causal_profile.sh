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
PYTHONPATH=$bld/pyroot timeout 150 ncu --section SourceCounters --section WarpStateStats --profile-from-start off \
  --kernel-name regex:forward_kernel -o /tmp/s21c-2048 -f python3 bench/ncu_grid_target.py --rows 128:1:2048 \
  --builds new >"$out/ncu_2048.log" 2>&1
log "ncu rc=$?"
ncu -i /tmp/s21c-2048.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip >"$out/sass_causal_2048.csv.gz"
log "pages: $(stat -c %s "$out/sass_causal_2048.csv.gz") B"
log total
