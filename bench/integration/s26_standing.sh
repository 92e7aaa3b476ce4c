#!/usr/bin/env bash
# Prepared in session 25, not run: the standing at the paired timing's resolution. Session 25's grid moved a row's
# ratio to cuDNN by up to +-4% between two runs of the same code, so the rows "below" at 0.99 cannot be told from
# noise. Here cuDNN joins the interleaved calls (sm90r_ab.py --paired --paired-peer): the default build and a
# control copy, beside cuDNN, over the standard grid (d64 / d128 / d256, causal and not, 512..16k), three passes;
# paired_standing.py then gives ours / cuDNN and the FA3-normalised ratio per row. Caveat: the paired calls run
# one at a time after an L2 flush, the grid's and the anchor's do_bench back to back; the same call also runs
# bench/compare.py's grid (two rounds) so that the two regimes' ratios to cuDNN can be compared row by row.
# Prediction: ours / cuDNN within 1% of the grid's mean over sessions 23 and 25; control / cuDNN equal to ours
# within 0.3%. One H200 call, ~6 minutes.
#   bash bench/integration/s26_standing.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s26s
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="64;128;256" sm90_build_py new "" 14 400
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy new
for pass in 1 2 3; do
  for d in 64 128 256; do
    PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/sm90r_ab.py --builds new,ctrl --hdims "$d" \
      --causal 1,0 --seqlens 512,1024,2048,4096,8192,16384 --rep 30 --paired 30 --paired-only --paired-peer 2>&1 |
      grep -v Warning | sed "s/^{/{\"pass\": \"p$pass\", /" >>"$out/ab.jsonl"
    log "paired standing p$pass d $d"
  done
done
(cd bench/integration && python3 paired_standing.py "$out/ab.jsonl" new && python3 paired_standing.py "$out/ab.jsonl" ctrl |
  tail -1) | tee -a "$out/summary.txt"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --modes fwd --rounds 2 \
  --out "$out" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$out/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log" | head -50
log total
