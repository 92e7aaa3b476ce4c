#!/usr/bin/env bash
# Prepared in session 26 (replacing session 25's s26_standing.sh, whose paired regime is not a standing), not run:
# the standing from interleaved stints, cuDNN in the interleave (sm90r_ab.py --sustained), over the standard grid
# (d64 / d128 / d256, causal and not, 512..16k), two passes. STINT_MS: the stint length s27_stints.sh found to read
# as the grid does (default 400). Read the record here, not on the device (the FA3 anchor is not there):
#   python3 bench/integration/paired_standing.py ab.jsonl new
# Prediction: 36 of 36 at or above cuDNN; the FA3-normalised rows as the grids' mean within 1-2%.
# One H200 call (~8 minutes at 400 ms).
#   STINT_MS=400 bash bench/integration/s27_standing.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27s
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="64;128;256" sm90_build_py new "" 14 400
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
for pass in 1 2; do
  for d in 64 128 256; do
    sustained_rows new "$d" 1,0 512,1024,2048,4096,8192,16384 "p$pass" "${STINT_MS:-400}" 200
    log "sustained standing p$pass d $d"
  done
done
log total
