#!/usr/bin/env bash
# Session 13 (issue 6): three forms of the row maxima off the d128 loop's common path, beside the old softmax (=0),
# cuDNN and a control, d128, two passes:
#   pure    the first form (s13_bysum*: +3.7-7.6% from 1k): two passes over a block whose partial sums trigger,
#           whatever came before (s13_pure.patch)
#   adapt1  after a block that moved a reference, the exact way at once (softmax_update_by_sum's max_first;
#           final13a's A/B: 0.99-1.05, 2k ~1.0: lower than pure's readings of other runs; s13_adapt1.patch)
#   adapt2  this tree: after such a block, softmax_update + convert_p (the old code) in a branch of its own
# Prediction: adapt2 = pure within noise (its fast path is pure's); adapt1 below both if final13a's reading was real.
# Run as of commit 42e52f1 (later commits change the defaults it compares against).
#   bash bench/integration/s13_adapt.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s13a
tree_copy /tmp/s13a-pure bench/integration/s13_pure.patch
tree_copy /tmp/s13a-adapt1 bench/integration/s13_adapt1.patch
PY_DIMS=128 sm90_build_py base "-DFLASHATTN_SM90_RESCALE_BY_SUM=0" 4 300 &
PY_DIMS=128 sm90_build_py adapt2 "" 4 300 &
(cd /tmp/s13a-pure && PY_DIMS=128 sm90_build_py pure "" 4 300) &
(cd /tmp/s13a-adapt1 && PY_DIMS=128 sm90_build_py adapt1 "" 4 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,pure,adapt1,adapt2,ctrl 128 0,1 512,1024,2048,8192,16384 40 240
sm90_ab p2 ctrl,adapt2,adapt1,pure,base 128 0,1 512,1024,2048,8192,16384 40 240
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base pure adapt1 adapt2 ctrl | tee -a "$out/summary.txt"
log total
