#!/bin/bash
# Session 13, one device call: (1) A/B of this tree (RESCALE_BY_SUM=1 in its max_first form; after a masked first
# block the second block takes the exact way at once) against =0 (session 12's softmax) and the same without that
# first-block rule (s13_noinit.patch, i.e. 0248e83's consumer), cuDNN and a control, d128, two passes; the rule is
# meant for short causal tiles (final13a / s13_adapt read causal 512 at 0.96-0.97 without it). (2) final10a.sh's
# verification of this tree (build, suites incl. the Spread cases, sanitizers, PTX-JIT backward, float64-checked
# CLI runs) plus final13a_runs.txt.
# Run as of commit 6728360 (later commits change the defaults it compares against).
#   bash bench/integration/final13b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
cp src/cuda/CMakeLists.txt /tmp/s13g-cmakelists  # device_call_begin drops the sm80 gencode; final10a.sh builds with it
device_call_begin s13g
tree_copy /tmp/s13g-noinit bench/integration/s13_noinit.patch
PY_DIMS=128 sm90_build_py base "-DFLASHATTN_SM90_RESCALE_BY_SUM=0" 5 300 &
PY_DIMS=128 sm90_build_py new "" 5 300 &
(cd /tmp/s13g-noinit && PY_DIMS=128 sm90_build_py noinit "" 5 300) &
wait
sm90_ctrl_copy
sm90_ab p1 base,new,noinit,ctrl 128 0,1 512,1024,2048,16384 40 200
sm90_ab p2 ctrl,noinit,new,base 128 0,1 512,1024,2048,16384 40 200
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new noinit ctrl | tee -a "$out/summary.txt"
trap - EXIT  # final10a.sh writes $OUT/summary.txt: the A/B's records go under their own names
cp "$out/summary.txt" "$OUT/ab_summary.txt"; cp "$out/ab.jsonl" "$OUT/ab.jsonl"
cp /tmp/s13g-cmakelists src/cuda/CMakeLists.txt
FINAL_NAME=g13b EXTRA_RUNS=bench/integration/final13a_runs.txt bash bench/integration/final10a.sh
