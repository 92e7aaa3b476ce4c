#!/usr/bin/env bash
# Session 32 (issue 6): the d256 causal 4k grid shape read 624-662 TFLOP/s over sets of inputs in one process
# (s32_stints256.sh, s32_tail.sh), and the ranking of three seeds flipped between the two calls: so not the data.
# This call times six allocations of the same inputs (one seed) in one set of interleaved stints, and logs the SM
# clock and power every 20 ms beside each stint's wall-clock span (rounds_probe.py --log-stints), to tell an
# allocation lottery (the sets differ) from a clock one (a slow set at a lower clock under the same power cap).
# Prediction: the sets within +-1% (then the spread was the card's drift across stints); if not, the slow ones at a
# lower clock (their memory traffic costs more energy).
# Result (s32_alloc.jsonl, s32_alloc_smi.csv.gz): six allocations of one input 648.6-665.8 TFLOP/s (cuDNN
# 560.4-576.2), medians of four stints each, while single stints of one allocation read 0.403-0.426 ms (+-3%) with
# the SM clock at 1620-1770 MHz under the 690-699 W cap (cuDNN's at 1718-1881 MHz): the spread of a few-stint
# median is the clock's wander, not the allocation.
# One H200 call (~2.5 minutes).
#   bash bench/integration/s32_alloc.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s32a
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS=256 sm90_build_py base "" 16 300
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 20 \
  >"$out/smi.csv" 2>&1 &
smi=$!
PYTHONPATH=$bld/pyroot:bench PYTHONUNBUFFERED=1 timeout 200 python3 bench/rounds_probe.py --build base --rounds 4 \
  --log-stints --sweep "256:1:4096:4x8@5/4x8@5/4x8@5/4x8@5/4x8@5/4x8@5" >"$out/alloc.jsonl" 2>"$out/alloc.err"
log "alloc rc=$?"
kill "$smi"
tail -3 "$out/alloc.err" >>"$out/summary.txt"
log total
