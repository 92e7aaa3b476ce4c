#!/usr/bin/env bash
# Session 18 (issue 6), DIAGNOSTIC on an H100 (kind nvidia-h100-x1): which instructions carry the stalls of causal
# d256 512. s18_stalls_short.sh found its warps' top stall to be the L1TEX scoreboard (4.8 of 10.1 cycles per issued
# instruction; cuDNN's and our long rows': the CTA barrier), though the dense consumers issue no global loads. ncu's
# PC sampling (SourceCounters, -lineinfo build, free clocks) per SASS instruction, exported as CSV, for the d256
# 64-key kernel at causal 512 and, for contrast, causal d256 8k.
#   bash bench/integration/s18_stall_sites.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18ss
trap 'cp "$out/summary.txt" "$out"/*.csv "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="256" sm90_build_py new "-lineinfo" 14 300
for row in 256:1:512 256:1:8192; do
  tag=${row//:/_}
  PYTHONPATH=$bld/pyroot timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats \
    --profile-from-start off -o "$out/r$tag" -f python3 bench/ncu_grid_target.py --rows "$row" --builds new \
    >"$out/ncu_$tag.log" 2>&1
  log "ncu $row rc=$?"
  ncu -i "$out/r$tag.ncu-rep" --page source --csv --print-source sass >"$out/sass_$tag.csv" 2>"$out/err_$tag.txt"
  log "source page $row rc=$? $(wc -l <"$out/sass_$tag.csv") lines $(tail -1 "$out/err_$tag.txt")"
  ncu -i "$out/r$tag.ncu-rep" --page details --csv >"$out/details_$tag.csv" 2>/dev/null
done
