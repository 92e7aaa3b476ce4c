#!/usr/bin/env bash
# Session 31: the tree with PREFETCH_O_OVER_V=1 (the early Q prefetch, after the second block, in the d256
# O-over-V kernel of 80-key blocks: non-causal from 513 keys). Builds new (d 64 / 128 / 256, for the grid) and
# base (PREFETCH_O_OVER_V=0, d256); the d256 C++ suites (fp16 + bf16) with racecheck / synccheck on d256 shapes,
# float64-checked CLI runs; 400 ms stints (cuDNN interleaved) of d256 non-causal 1k / 2k / 4k, two passes, base /
# ctrl / new (paired timing hides energy effects: session 26); one grid (two rounds) of the new tree.
# Prediction: stints new / base +0.3..+1% at 1k / 2k, flat at 4k; the grid as session 30's within the card's
# spread, d256 non-causal 1k / cuDNN up ~0.7%.
# One H200 call (~6 minutes).
#   bash bench/integration/s31_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s31f
test_cli_build "256" "fp16;bf16" 6 "" &
PY_DIMS="64;128;256" sm90_build_py new "" 7 300 &
PY_DIMS=256 sm90_build_py base "-DFLASHATTN_SM90_PREFETCH_O_OVER_V=0" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 256 --seqlen-q 1024 -b 4 --heads 8 --heads-kv 8" || exit 1
cli_runs "--head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 256 --seqlen-q 3000 -b 1 --heads 4 --heads-kv 4" \
  "--head-dim 256 --seqlen-q 512 -b 8 --heads 8 --heads-kv 8"
cli_summary
race='*Spread*cuda_sm90*300x1000*:*Spread*cuda_sm90*512x2304_b1_h2_d256*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
sm90_ctrl_copy base
for pass in 1 2; do
  sustained_rows base,ctrl,new 256 0 1024,2048,4096 "p$pass" 400 70
done
log "stints done"
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ctrl new | sed -n "/^sustained/,\$p" | tee -a "$out/summary.txt"
compare_grid 2 200
(cd "$out" && tar -czf "${OUT:-/tmp}/grid.tgz" compare-*)
log total
