#!/usr/bin/env bash
# Session 30: the d128 Q prefetch (early, split loop; s30_split.sh paired: non-causal 512 / 1k / 2k / 4k +3.0 / +2.3
# / +0.7 / +0.4%, causal 512 / 1k +0.9 / +0.1%, the rest ±0.15%) in 400 ms stints (sm90r_ab.py --sustained), where
# each build runs at the clock its own energy per call sets (session 26: paired timing hides that). The prefetch
# moves Q's DRAM read earlier, it does not add one, so the prediction is the paired gains within the stints' ±1%.
# Builds old (s30_final_no_prefetch.patch), new (the tree) and a control copy of old; two passes.
# One H200 call (~3.5 minutes).
#   bash bench/integration/s30_stints.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s30t
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
tree_copy /tmp/s30t-old bench/integration/s30_final_no_prefetch.patch
PY_DIMS=128 sm90_build_py new "" 8 200 &
(cd /tmp/s30t-old && PY_DIMS=128 sm90_build_py old "" 8 200) &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy old
for pass in 1 2; do
  sustained_rows old,ctrl,new 128 0 512,1024,2048,4096 "p$pass" 400 70
  sustained_rows old,ctrl,new 128 1 512,1024,2048 "p$pass" 400 60
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" old ctrl new | sed -n '/^sustained/,$p' | tee -a "$out/summary.txt"
log total
