#!/usr/bin/env bash
# Session 40 (issue 6): the standing's rows below the FA3 anchor (session 38: d128 non-causal 4k, d256 non-causal
# 4k / 8k, d256 causal 4k on the anchor run's cuDNN; d128 causal 2k / 4k on the main table's) and their neighbours,
# in more passes than a whole-grid standing affords: the tree's Python extension (d128, d256, bf16), 400 ms stints
# with cuDNN interleaved (sustained_rows), four passes; read with paired_standing.py.
# Prediction: every row within 2% of the anchor, as in sessions 36 and 38; whether the means sit above or below 1 is
# what this measures.
# One H200 call (~5 minutes).
#   bash bench/integration/s40_standing_rows.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s40t
out=${OUT:-$out} # results straight to $OUT, so that a call stopped at its limit still returns the rows done
PY_DIMS="128;256" sm90_build_py new "" 16 200
rm -f "$out"/py_*_configure.log
for pass in 1 2 3 4; do
  sustained_rows new 128 0 4096,8192 "p$pass" 400 100
  sustained_rows new 128 1 2048,4096 "p$pass" 400 100
  sustained_rows new 256 0 4096,8192 "p$pass" 400 100
  sustained_rows new 256 1 4096 "p$pass" 400 100
  log "pass $pass"
done
python3 bench/integration/paired_standing.py "$out/ab.jsonl" new >>"$out/summary.txt" 2>&1
log total
