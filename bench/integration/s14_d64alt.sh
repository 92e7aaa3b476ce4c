#!/usr/bin/env bash
# Session 14 (issue 6), after s14_d64cond.sh: there the build with the four-consumer d64 kernel at every length
# (c64a) read causal 16k 1.054 of base (control 0.991), where base runs the three-consumer kernel; one reading.
# This call repeats the long rows with the length limit alone changed: alt = FLASHATTN_SM90_D64_ALT_MAX_SEQLEN=0 and
# _MASKED=0 (the four-consumer kernel, 256 x 64 tiles, from 512 queries at any length), base, a control; d64
# non-causal and causal 8k / 16k, three passes in rotated orders beside cuDNN.
# Prediction: causal 16k +2-5%, the others within +-2% (session 9: four consumers against three at 8k / 16k
# within noise non-causal, -1% causal, before the later d64 changes).
#   bash bench/integration/s14_d64alt.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s14f
PY_DIMS=64 sm90_build_py base "" 8 300 &
PY_DIMS=64 sm90_build_py alt "-DFLASHATTN_SM90_D64_ALT_MAX_SEQLEN=0 -DFLASHATTN_SM90_D64_ALT_MAX_SEQLEN_MASKED=0" 8 300 &
wait
sm90_ctrl_copy
sm90_ab p1 base,alt,ctrl 64 0,1 8192,16384 60 150
sm90_ab p2 ctrl,alt,base 64 0,1 8192,16384 60 150
sm90_ab p3 alt,base,ctrl 64 0,1 8192,16384 60 150
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base alt ctrl | tee -a "$out/summary.txt"
log total
