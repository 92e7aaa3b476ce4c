#!/usr/bin/env bash
# Session 29, last call: K_LOOKAHEAD=1 by default (the masked d = dv = 256 kernels with 64-key blocks; their SASS
# is the K_LOOKAHEAD=2 build's that s29_klook.sh verified and timed; every other kernel is unchanged). Steps: the
# tests / CLI (d64 / d128 / d256, fp16 + bf16) and the Python extension "new" (d64 / d128 / d256) of this tree;
# a causal d256 CLI run with a short limit first, then float64-checked runs (causal 2k and windowed d256, GQA
# d256 non-causal); the suites, racecheck and synccheck on the d256 causal / windowed / 80-key cases; two grids
# (two rounds each) for the standing, their files in grids.tgz.
# Prediction: the suites pass; the grid's d256 causal 1k / 4k rows read ~+1 / +0.4% (within the grid's spread).
# One H200 call (~6 minutes).
#   bash bench/integration/s29_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s29f
test_cli_build "64;128;256" "fp16;bf16" 8 "" &
PY_DIMS="64;128;256" sm90_build_py new "" 8 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 256 --causal --seqlen-q 2048 -b 2 --heads 8 --heads-kv 8" || exit 1
cli_runs "--head-dim 256 --window 300,0 --seqlen-q 1500 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 256 --seqlen-q 1000 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 128 --causal --seqlen-q 1024 -b 4 --heads 16 --heads-kv 16"
cli_summary
race='*Spread*cuda_sm90*300x1000*:*Spread*cuda_sm90*512x2304_b1_h2_d256_fp16*:*ConsumerKeyRange*480x510*:*Spread*cuda_sm90*512x4096*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
compare_grid 2 200
compare_grid 2 200
(cd "$out" && tar -czf "${OUT:-/tmp}/grids.tgz" compare-*)
log total
