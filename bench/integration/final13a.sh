#!/bin/bash
# Session 13, one device call: (1) the A/B of the default (FLASHATTN_SM90_RESCALE_BY_SUM=1 with the max-first way
# after a moved reference) against the same tree built with =0 (session 12's softmax), cuDNN and a control, d128,
# two passes; (2) final10a.sh's verification (build, suites incl. the new Spread cases, sanitizers, PTX-JIT
# backward, float64-checked CLI runs) plus final13a_runs.txt.
# Run as of commit 0248e83 (later commits change the defaults it compares against).
#   bash bench/integration/final13a.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
cp src/cuda/CMakeLists.txt /tmp/s13f-cmakelists  # device_call_begin drops the sm80 gencode; final10a.sh builds with it
device_call_begin s13f
tree_copy /tmp/s13f-new
PY_DIMS=128 sm90_build_py base "-DFLASHATTN_SM90_RESCALE_BY_SUM=0" 8 300 &
(cd /tmp/s13f-new && PY_DIMS=128 sm90_build_py bs "" 8 300) &
wait
sm90_ctrl_copy
sm90_ab p1 base,bs,ctrl 128 0,1 512,1024,2048,8192,16384 40 200
sm90_ab p2 ctrl,bs,base 128 0,1 512,1024,2048,8192,16384 40 200
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base bs ctrl | tee -a "$out/summary.txt"
trap - EXIT  # final10a.sh writes $OUT/summary.txt: the A/B's records go under their own names
cp "$out/summary.txt" "$OUT/ab_summary.txt"; cp "$out/ab.jsonl" "$OUT/ab.jsonl"
cp /tmp/s13f-cmakelists src/cuda/CMakeLists.txt
FINAL_NAME=g13a EXTRA_RUNS=bench/integration/final13a_runs.txt bash bench/integration/final10a.sh
