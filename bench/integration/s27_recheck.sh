#!/usr/bin/env bash
# Prepared in session 26, not run: session 25's two defaults that paired timing chose, re-read in interleaved
# stints (sm90r_ab.py --sustained; session 26 found that paired timing hides energy effects). Both cut
# instructions rather than memory traffic, so they should hold: mask form 2 in every kernel (MASK_FORM_OTHER 2;
# paired d64 causal +0.9..+3.0%, d192 causal +1.9..+3.1%) and the decoded tile handoff at d64 (DECODED_HANDOFF 1;
# paired d64 +0.2..+2.0%). old25 = both back to 0. STINT_MS as s27_stints.sh found (default 400). Two passes over
# d64 causal and not, 512..16k, and d192 (d = dv = 192) causal 1k / 4k / 16k. Prediction: new / old25 within 0.5%
# of the paired readings.
# One H200 call (~6 minutes at 400 ms).
#   STINT_MS=400 bash bench/integration/s27_recheck.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27c
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="64;192" sm90_build_py new "" 8 300 &
PY_DIMS="64;192" sm90_build_py old25 "-DFLASHATTN_SM90_MASK_FORM_OTHER=0 -DFLASHATTN_SM90_DECODED_HANDOFF=0" 8 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows new,old25 64 1,0 512,1024,2048,4096,8192,16384 "p$pass" "${STINT_MS:-400}" 150
  sustained_rows new,old25 192 1 1024,4096,16384 "p$pass" "${STINT_MS:-400}" 80
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" new old25 | sed -n '/^sustained/,$p' | tee -a "$out/summary.txt"
log total
