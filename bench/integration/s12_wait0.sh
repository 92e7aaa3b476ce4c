#!/usr/bin/env bash
# Session 12 (issue 6), PREPARED, NOT RUN (the session's device time was spent). The S wait of the key-block loop as
# wait_group 0, so S and P V have both completed before the softmax (no overlap of a warpgroup's softmax with its own
# register-A P V, as in cuDNN's kernel), against the tree's wait_group 1. Why it is worth a run: in the tree, ptxas
# already hoists the P V wait above the exponentials (only the row maxima overlap P V), and moving the exponentials
# in front of it measured 0.86-0.97 (s12_pvwait); a kernel whose softmax is one basic block (no rescale branch, as
# FlashAttention 3's) may get its P V wait hoisted to the block's top, above the maxima too (not checked).
# Variant: a sed of consumer.h on a copy of the tree (builds clean: no spills beyond base's, no C75xx; issue
# stretch unchanged). Prediction: within +-2% if the maxima's overlap with P V is neutral; up if it costs like the
# exponentials' did.
#   base  the tree; w0  the variant; ctrl  base again
# bench/sm90r_ab.py (cuDNN beside), d 64 / 128 / 256, causal and not, 512 / 2k / 8k / 16k, two passes.
#   bash bench/integration/s12_wait0.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12w
tree_copy /tmp/s12w-var
sed -i 's/ptx::wgmma_wait_group<1>();  \/\/ S(n) done; P V still running/ptx::wgmma_wait_group<0>();/' \
  /tmp/s12w-var/src/cuda/sm90/consumer.h
log "variant: $(grep -c 'wgmma_wait_group<1>' /tmp/s12w-var/src/cuda/sm90/consumer.h) wait_group 1 left (expect 0)"
PY_DIMS="64;128;256" sm90_build_py base "" 8 300 &
(cd /tmp/s12w-var && PY_DIMS="64;128;256" sm90_build_py w0 "" 8 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,w0,ctrl 64,128,256 0,1 512,2048,8192,16384 40 200
sm90_ab p2 ctrl,w0,base 64,128,256 0,1 512,2048,8192,16384 40 200
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base w0 ctrl | tee -a "$out/summary.txt"
log total
