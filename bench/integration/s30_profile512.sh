#!/usr/bin/env bash
# Prepared in session 29, not run: where the d128 non-causal 512 row's time goes (session 21's profile was of 4k
# against 16k). The grid holds 2048 tiles at every length, so 512 (four 128-key blocks per tile) against 4k (32)
# splits per-tile from per-block instructions and stall samples the same way (bench/integration/s21_tile_split.py
# on the two sass pages, --warp-tiles 16384). At 512 the row reads 0.969 of cuDNN on average over seven grids, and
# its 512 / 16k ratio puts the tile boundary at ~1.75 key blocks' time per tile. Same steps as s21_tile_profile.sh.
# One H200 call (~3 minutes).
#   bash bench/integration/s30_profile512.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s30t
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS=128 sm90_build_py new "-lineinfo" 12 300
for s in 512 4096; do
  PYTHONPATH=$bld/pyroot timeout 150 ncu --section SourceCounters --section WarpStateStats --profile-from-start off \
    --kernel-name regex:forward_kernel -o "/tmp/s30t-$s" -f python3 bench/ncu_grid_target.py --rows "128:0:$s" \
    --builds new >"$out/ncu_$s.log" 2>&1
  log "ncu $s rc=$?"
  ncu -i "/tmp/s30t-$s.ncu-rep" --page source --csv --print-source sass >"$out/sass_$s.csv" 2>/dev/null
  ncu -i "/tmp/s30t-$s.ncu-rep" --page details --csv >"$out/details_$s.csv" 2>/dev/null
  gzip -f "$out/sass_$s.csv"
  log "pages $s: $(stat -c %s "$out/sass_$s.csv.gz") B sass.gz"
done
log total
