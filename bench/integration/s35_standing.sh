#!/usr/bin/env bash
# Session 35, on the device time left after its A/B calls: one pass of s27_standing.sh's standing from interleaved
# 400 ms stints (sm90r_ab.py --sustained, cuDNN in the interleave) over the d128 and d256 rows of the standard grid
# (the d64 rows sit 8-28% above cuDNN in every grid). Results straight to $OUT; read here with
#   python3 bench/integration/paired_standing.py ab.jsonl new
# Prediction: 24 of 24 at or above cuDNN (the 512-key rows included: 1.01-1.21 in session 31's stints); on the
# normalised FA3 anchor d256 causal 4k below (0.96-0.98), d128 non-causal 4k near 0.98.
# One H200 call (~3.5 minutes).
#   bash bench/integration/s35_standing.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s35s
out=${OUT:-$out} # results straight to $OUT, so that a call stopped at its limit still returns the rows done
PY_DIMS="128;256" sm90_build_py new "" 16 200
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
for d in 128 256; do
  sustained_rows new "$d" 1,0 512,1024,2048,4096,8192,16384 p1 400 150
  log "sustained standing d $d"
done
log total
