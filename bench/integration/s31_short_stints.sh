#!/usr/bin/env bash
# Session 31: the final tree against cuDNN on the 512-key rows, where the grids' margins are thinnest (the mean of
# session 31's two grids: d128 causal 512 1.001, d64 causal 512 1.019, d128 non-causal 512 1.025), in 400 ms
# stints with cuDNN interleaved (two passes; a grid row is two do_bench medians per backend, +-2-3% between grids).
# Prediction: every row >= 1.0 of cuDNN, d128 causal 512 1.00-1.03.
# One H200 call (~3 minutes).
#   bash bench/integration/s31_short_stints.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s31s
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="64;128;256" sm90_build_py new "" 14 300
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy new
for pass in 1 2; do
  sustained_rows new,ctrl 64,128,256 0 512 "p$pass" 400 60
  sustained_rows new,ctrl 64,128,256 1 512 "p$pass" 400 60
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" new ctrl | sed -n '/^sustained/,$p' | tee -a "$out/summary.txt"
log total
