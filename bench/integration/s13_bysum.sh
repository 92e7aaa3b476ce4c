#!/usr/bin/env bash
# Session 13 (issue 6): the row maxima off the d128 key-block loop's common path (FLASHATTN_SM90_RESCALE_BY_SUM,
# softmax.h softmax_update_by_sum): a block's probabilities are taken against the rows' current references right
# after the P V wait, packed straight into P V's register operand, and the maxima (tree, shuffles) are computed
# only when a thread's partial row sum exceeds 2^8 (then every reference moves to its row's maximum and the block is
# taken again). Static cycles from the P V wait to the vote: 593 against base's 783 from the S wait through the
# exponentials (cluster kernel; 46 instructions fewer per block); spills 8 -> 28 B, outside the loop.
# Prediction: +2-5% at d128 from 2k if the maxima's instructions cost like session 13's O rescale did (64
# instructions ~4%), ~0 if, like the exponentials (session 12), they ride in the shadow of the P V wait. The error
# column must equal base's.
# Run as of commit a76546d (later commits change the defaults it compares against).
#   bash bench/integration/s13_bysum.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s13b
tree_copy /tmp/s13b-bs
PY_DIMS=128 sm90_build_py base "" 8 300 &
(cd /tmp/s13b-bs && PY_DIMS=128 sm90_build_py bs "-DFLASHATTN_SM90_RESCALE_BY_SUM=1" 8 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,bs,ctrl 128 0,1 512,2048,8192,16384 40 200
sm90_ab p2 ctrl,bs,base 128 0,1 512,2048,8192,16384 40 200
sm90_ab p3 bs,base,ctrl 128 0,1 512,2048,8192,16384 40 200
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base bs ctrl | tee -a "$out/summary.txt"
log total
