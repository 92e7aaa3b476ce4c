#!/usr/bin/env bash
# Session 45: where the split-KV decode kernel's fixed time goes. s45_ncu.py read the forward kernel at 17.5 us
# under ncu for batch 1 over 1024 keys (16 CTAs of four key blocks) against cuDNN's 7.3 + 3.7. ncu's
# SpeedOfLight, LaunchStats, Occupancy, WarpStateStats and SourceCounters sections of the third call of each
# shape (s45_probe.py), the Python extension alone built (d128 bf16).
# Second form: ncu's source page (every SASS line's stall samples), the 40 lines with most samples.
# Prediction: the warps wait on barriers (TMA latency, the tile handoff) far more than they issue.
#   bash bench/integration/s45_probe.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s45p
sm90_build_py new "" 16 300
for skip in 2 5; do
  PYTHONPATH=$bld/pyroot timeout 150 ncu --kernel-name regex:forward_kernel --launch-skip "$skip" --launch-count 1 \
    --section SourceCounters --page source --print-source sass --csv \
    python3 bench/integration/s45_probe.py >"$out/source_$skip.csv" 2>&1
  log "ncu source skip $skip rc=$?"
  # The 40 SASS lines with the most stall samples, and the samples' total.
  python3 bench/integration/s45_source_top.py "$out/source_$skip.csv" 40 2>&1 | tee -a "$out/summary.txt"
done
