#!/usr/bin/env bash
# RAN in session 21 on a0a2779 (H200; s21_tile_*): the per-tile excess is ~1.4 key blocks of instructions and samples.
# Keep fewer than eight files under $OUT: the sass pages of the first call did not come back (refetched).
# PREPARED in session 20, not run: where the d128 kernel's time goes at the tile boundary. Against the FA3 anchor
# the d128 non-causal rows read 0.946 / 0.966 / 0.979 (raw, session 20's H200 grid) at 4k / 8k / 16k: FA3 is flat
# from 4k (687-690) and ours is not (650 / 664 / 676), so ~4% of a 4k tile (32 key blocks, ~1.4 blocks' time)
# goes to per-tile costs FA3 does not pay; session 15 found 1.5% of it in writing O. This call PC-samples the
# kernel (-lineinfo build) at non-causal 4k and 16k and keeps the samples per SASS instruction and per source
# line, to be split offline into loop, tile boundary (begin_tile, issue_first_s, the first block's softmax) and
# epilogue (store_output). Ask for an H200.
#   bash bench/integration/s21_tile_profile.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s21t
out=${OUT:-$out} # results straight to $OUT
sm90_build_py new "-lineinfo" 12 300
for s in 4096 16384; do
  PYTHONPATH=$bld/pyroot timeout 150 ncu --section SourceCounters --section WarpStateStats --profile-from-start off \
    --kernel-name regex:forward_kernel -o "/tmp/s21t-$s" -f python3 bench/ncu_grid_target.py --rows "128:0:$s" \
    --builds new >"$out/ncu_$s.log" 2>&1
  log "ncu $s rc=$?"
  ncu -i "/tmp/s21t-$s.ncu-rep" --page source --csv --print-source sass >"$out/sass_$s.csv" 2>/dev/null
  ncu -i "/tmp/s21t-$s.ncu-rep" --page source --csv --print-source cuda >"$out/cuda_$s.csv" 2>/dev/null
  ncu -i "/tmp/s21t-$s.ncu-rep" --page details --csv >"$out/details_$s.csv" 2>/dev/null
  gzip -f "$out/sass_$s.csv"
  log "pages $s: $(stat -c %s "$out/sass_$s.csv.gz") B sass.gz, $(wc -l <"$out/cuda_$s.csv") cuda lines"
done
log total
