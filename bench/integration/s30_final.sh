#!/usr/bin/env bash
# Session 30's final call: the tree with the next tile's Q prefetched early in the unmasked-instance two-consumer
# d128 kernels, after the tile's first key block for problems without a window and its third for windowed ones
# (causal), and not at all for windowed problems of more than 1024 keys (forward_config.h PREFETCH_AFTER_BLOCKS*,
# PREFETCH_WINDOWED_MAX_SEQLEN; chosen from s30_d128_early.sh). The d64 / d256 kernels are SASS-identical to the
# session's start (d1a983c), the d128 decode and masked multicast ones too. Steps: the C++ suites (d 64 / 128 /
# 256, fp16 + bf16), racecheck and synccheck on a reduced grid with short causal and windowed shapes, float64-checked
# CLI runs (causal and windowed d128 at 512 / 1000 keys); paired timing against the tree without the d128 prefetch
# (s30_final_no_prefetch.patch), three passes, d128 rows 512..16k both masks; one grid (two rounds).
# Prediction: non-causal 512 / 1k / 2k / 4k +2.8 / +2.1 / +0.7 / +0.4%, 16k 0; causal 512 / 1k +2.0 / +0.7%,
# from 2k 0 (±0.2%).
# One H200 call (~6 minutes).
#   bash bench/integration/s30_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s30f
tree_copy /tmp/s30f-old bench/integration/s30_final_no_prefetch.patch
test_cli_build "64;128;256" "fp16;bf16" 6 "" &
PY_DIMS="64;128;256" sm90_build_py new "" 6 300 &
(cd /tmp/s30f-old && PY_DIMS=128 sm90_build_py old "" 4 300) &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 128 --causal --seqlen-q 512 -b 8 --heads 16 --heads-kv 16" || exit 1
cli_runs "--head-dim 128 --causal --seqlen-q 1000 -b 3 --heads 16 --heads-kv 4" \
  "--head-dim 128 --window 200,0 --seqlen-q 1024 -b 2 --heads 8 --heads-kv 8" \
  "--head-dim 128 --seqlen-q 700 -b 4 --heads 8 --heads-kv 2" \
  "--head-dim 256 --causal --seqlen-q 2048 -b 2 --heads 8 --heads-kv 8"
cli_summary
race='*Spread*cuda_sm90*700x700*:*Spread*cuda_sm90*384x1500*:*Spread*cuda_sm90*300x1000*:*Spread*cuda_sm90*512x2304_b1_h2_d256_fp16*:*ConsumerKeyRange*480x510*:*Spread*cuda_sm90*512x4096*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$race" 150
suites_summary
synccheck_on "$race" 60
rm -f "$out/racecheck.txt"
sm90_ctrl_copy old
paired_passes old,ctrl,new 128 0 512,1024,2048,4096,16384 3 120
paired_passes old,ctrl,new 128 1 512,1024,2048,4096,16384 3 120
paired_summary old ctrl new
compare_grid 2 200
(cd "$out" && tar -czf "${OUT:-/tmp}/grid.tgz" compare-*)
log total
