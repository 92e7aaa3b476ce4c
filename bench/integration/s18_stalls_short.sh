#!/usr/bin/env bash
# Session 18 (issue 6), DIAGNOSTIC on an H100 (kind nvidia-h100-x1): where the warps of the short rows wait.
# s18_clocks_short.sh put the H100's short-row gap to cuDNN in time that does not shrink with the SM clock, and
# s18_prefetch_q.sh ruled out the next tile's Q load from DRAM. ncu's warp-state and scheduler sections (free
# clocks) at causal d256 / d128 512 against long rows of the same kernels (causal d256 8k, non-causal d128 8k) and
# against cuDNN at the two short rows: stall reasons per issued instruction, issue-slot use, and the eligible warps.
# Prediction: the short rows' consumers spend a larger share in barrier / wait stalls (the tile switch) than the
# long rows', with long-scoreboard (memory) stalls about equal.
#   bash bench/integration/s18_stalls_short.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18st
trap 'cp "$out/summary.txt" "$out"/*.csv "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="128;256" sm90_build_py new "" 14 300
PYTHONPATH=$bld/pyroot timeout 200 ncu --clock-control none --section WarpStateStats --section SchedulerStats \
  --section SpeedOfLight --profile-from-start off --csv --page details python3 bench/ncu_grid_target.py \
  --rows 256:1:512,128:1:512 --builds new --cudnn >"$out/ncu_short.csv" 2>"$out/ncu_err.txt"
log "ncu short rc=$? $(tail -1 "$out/ncu_err.txt")"
PYTHONPATH=$bld/pyroot timeout 200 ncu --clock-control none --section WarpStateStats --section SchedulerStats \
  --section SpeedOfLight --profile-from-start off --csv --page details python3 bench/ncu_grid_target.py \
  --rows 256:1:8192,128:0:8192 --builds new >"$out/ncu_long.csv" 2>"$out/ncu_err.txt"
log "ncu long rc=$? $(tail -1 "$out/ncu_err.txt")"
