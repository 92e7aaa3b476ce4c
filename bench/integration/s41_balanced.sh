#!/usr/bin/env bash
# Session 41 (issue 6): the balanced tail of the static couples on placement clusters (BALANCED_TAIL,
# src/cuda/sm90/balanced_tail.h). d256 causal 512-4k run 512 couples on 132 CTAs (3.88 rounds): 16 CTAs idle
# through the last round (s40_timeline.sh: 4.2% of the SM time after the loops end at 4k). The plan keeps 2 / 2 / 3
# whole rounds of couples at 4k / 2k / 1k and hands out the rest as single tiles, longest first, in a snake over
# the CTAs; 512 keeps plain couples (the model finds no gain).
# Builds: the C++ tests + CLI (d256, fp16 + bf16) and two d256 bf16 Python extensions, base (balanced) and plain
# (BALANCED_TAIL=0), a control copy of plain. Outputs bitwise equal to plain's at the grid rows and odd shapes;
# float64-checked CLI runs; the sm90 suites, racecheck and synccheck on the reduced grid; 400 ms stints beside
# cuDNN over d256 causal 512-4k, three passes.
# Prediction (the model's makespans): 4k +2.7%, 2k +2.7%, 1k +2.4%, 512 unchanged.
# One H200 call (~6 minutes).
#   bash bench/integration/s41_balanced.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s41b
test_cli_build "256" "fp16;bf16" 6 "" &
PY_DIMS=256 sm90_build_py base "" 5 400 &
PY_DIMS=256 sm90_build_py plain "-DFLASHATTN_SM90_BALANCED_TAIL=0" 5 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
sm90_ctrl_copy plain
PYTHONPATH=$bld/pyroot:bench timeout 150 python3 bench/bitwise_builds.py --builds plain,base --head-dim 256 \
  32x512x512:c 16x1024x1024:c 8x2048x2048:c 4x4096x4096:c 1x4096x4096x1:c 2x4096x4096:c 3x1000x3001x5:c \
  5x2048x2048x7:c 64x256x256x3:c >>"$out/summary.txt" 2>&1
log "equality"
cli_runs "--head-dim 256 --causal --seqlen-q 4096 -b 4 --heads 8" \
  "--head-dim 256 --causal --seqlen-q 1024 -b 16 --heads 8 --dtype fp16" \
  "--head-dim 256 --causal --seqlen-q 1000 --seqlen-k 3001 -b 3 --heads 5" \
  "--head-dim 256 --causal --seqlen-q 2048 -b 1 --heads 3 --softcap 30 --sink" \
  "--head-dim 256 --causal --seqlen-q 2048 -b 2 --heads 8 --heads-kv 2 --alibi"
cli_summary
reduced='Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_max113x203_*'
suites_and_racecheck '*cuda_sm90*:*Sm90*' "$reduced" 240
suites_summary
synccheck_on "$reduced" 90
rm -f "$out/racecheck.txt"
stint_passes plain,base,ctrl 256 3 1:512,1024,2048,4096
sustained_summary plain base ctrl
log total
