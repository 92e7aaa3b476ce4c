#!/usr/bin/env bash
# Ran in session 30 on d3b6de7. The PREFETCH_SPLIT_LOOP switch (its =0, the one-loop form) was removed after
# this run: the split form is the only one since.
# Session 30: s30_final.sh read d128 causal 2k / 4k at -1.2 / -0.5% against the tree without the d128 prefetch,
# though the windowed limit (1024 keys) skips the prefetch there: the cost is the producer's code, not the
# prefetch (the next tile's decode inside the key-block loop: 24-32 spilled bytes, reloaded in the loop). Now
# (PREFETCH_SPLIT_LOOP=1, the default) the loop is split in two at the prefetch: 12-16 spilled bytes, none in the
# loops (local SASS); the d64 / d256 kernels and the other d128 ones are SASS-identical to the session's start.
# Builds old (s30_final_no_prefetch.patch), inloop (PREFETCH_SPLIT_LOOP=0: s30_final.sh's tree) and new; the
# C++ suites (d128, fp16 + bf16) with racecheck and synccheck on short causal / windowed / unmasked d128 shapes,
# float64-checked CLI runs; paired, three passes, d128 rows 512..16k both masks; one grid (two rounds).
# Prediction: new against old as inloop at non-causal 512..4k (+2.9..+0.5%) and causal 512 / 1k (+1.8 / +0.4%),
# causal 2k / 4k within ±0.3% (inloop -1.2 / -0.5%).
# One H200 call (~5 minutes).
#   bash bench/integration/s30_split.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s30s
tree_copy /tmp/s30s-old bench/integration/s30_final_no_prefetch.patch
test_cli_build "128" "fp16;bf16" 6 "" &
PY_DIMS="64;128;256" sm90_build_py new "" 6 300 &
(cd /tmp/s30s-old && PY_DIMS=128 sm90_build_py old "" 2 300) &
PY_DIMS=128 sm90_build_py inloop "-DFLASHATTN_SM90_PREFETCH_SPLIT_LOOP=0" 2 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 128 --causal --seqlen-q 2048 -b 2 --heads 16 --heads-kv 16" || exit 1
cli_runs "--head-dim 128 --causal --seqlen-q 1000 -b 3 --heads 16 --heads-kv 4" \
  "--head-dim 128 --window 300,0 --seqlen-q 3000 -b 2 --heads 8 --heads-kv 8" \
  "--head-dim 128 --seqlen-q 700 -b 4 --heads 8 --heads-kv 2"
cli_summary
race='*Spread*cuda_sm90*700x700*:*Spread*cuda_sm90*384x1500*:*Spread*cuda_sm90*600x900*:*Spread*cuda_sm90*512x2304_b1_h2_d128*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
sm90_ctrl_copy old
paired_passes old,ctrl,inloop,new 128 0 512,1024,2048,4096,16384 3 120
paired_passes old,ctrl,inloop,new 128 1 512,1024,2048,4096,16384 3 120
paired_summary old ctrl inloop new
compare_grid 2 200
(cd "$out" && tar -czf "${OUT:-/tmp}/grid.tgz" compare-*)
log total
