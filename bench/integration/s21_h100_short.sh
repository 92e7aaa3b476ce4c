#!/usr/bin/env bash
# RAN in session 21 on a0a2779 (H100; s21_h100_short_*): 128B / 256B median 0.994, control 1.000.
# PREPARED in session 20, not run: the tensor maps' L2 promotion at the H100's short grid rows. Session 20 moved
# every sm90 map to the 128B promotion (tensor_map.cu) after measuring it on the H200 (decode +7.5-10%, the grid
# unchanged) and the H100's decode (0.996); the H100's 512 rows, where session 19's grid read 0.953-0.973 of
# cuDNN with ~70% of the DRAM peak in use (session 18), were not timed with it. Builds: new (128B, the default),
# p256 (the old maps), p0 (no promotion), a control copy of new; the 512 / 1k rows of d64 / d128 / d256, causal
# and not, three passes. Prediction: within +-1% of p256 on every row (the H200's short rows did not move);
# if a row moves by more than the control's spread, the promotion becomes a per-path choice. Ask for
# nvidia-h100-x1.
#   bash bench/integration/s21_h100_short.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s21h
out=${OUT:-$out} # results straight to $OUT: a call cut off at its limit still brings back what it measured
PY_DIMS="64;128;256" sm90_build_py new "" 5 400 &
PY_DIMS="64;128;256" sm90_build_py p256 "-DFLASHATTN_SM90_L2_PROMOTION=256" 5 400 &
PY_DIMS="64;128;256" sm90_build_py p0 "-DFLASHATTN_SM90_L2_PROMOTION=0" 5 400 &
wait
sm90_ctrl_copy new
for pass in "p1 p256,new,p0,ctrl" "p2 ctrl,p0,new,p256" "p3 new,ctrl,p256,p0"; do
  set -- $pass
  for d in 64 128 256; do
    sm90_ab "$1" "$2" $d 1 512,1024 60 60
    sm90_ab "$1" "$2" $d 0 512,1024 60 60
  done
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" p256 new p0 ctrl | tee -a "$out/summary.txt"
log total
