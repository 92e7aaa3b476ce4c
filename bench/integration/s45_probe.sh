#!/usr/bin/env bash
# Session 45: where the split-KV decode kernel's fixed time goes. s45_ncu.py read the forward kernel at 17.5 us
# under ncu for batch 1 over 1024 keys (16 CTAs of four key blocks) against cuDNN's 7.3 + 3.7. ncu's
# SpeedOfLight, LaunchStats, Occupancy, WarpStateStats and SourceCounters sections of the third call of each
# shape (s45_probe.py), the Python extension alone built (d128 bf16).
# Prediction: the warps wait on barriers (TMA latency, the tile handoff) far more than they issue.
#   bash bench/integration/s45_probe.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s45p
sm90_build_py new "" 16 300
for skip in 2 5; do
  PYTHONPATH=$bld/pyroot timeout 150 ncu --kernel-name regex:forward_kernel --launch-skip "$skip" --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    --section SchedulerStats --section SourceCounters --print-details all \
    python3 bench/integration/s45_probe.py >"$out/ncu_$skip.txt" 2>&1
  log "ncu skip $skip rc=$?"
  grep -v '^==PROF==' "$out/ncu_$skip.txt" | grep -E -v '^\s*$' | cut -c1-200 | head -150 >>"$out/summary.txt"
done
