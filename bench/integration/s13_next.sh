#!/usr/bin/env bash
# Prepared in session 12, run in session 13 (issue 6; records s13_next_ab.jsonl, s13_next_summary.txt). Two ways of
# placing a key block's P V wait against its softmax (docs/kernel-notes-sm90.md, session 12: ptxas hoists the tree's
# wait above the exponentials, so only the row maxima overlap the warpgroup's own P V):
#   base  the tree
#   w0    the S wait as wait_group 0: S and P V both done before the softmax (no overlap at all, as cuDNN's kernel);
#         a sed of consumer.h on a copy of the tree
#   top   s12_pvwait2.patch (branch session12-pvwait2) with FLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=1: the wait at the
#         top of the next iteration, so the exponentials overlap P V; O rescaled unconditionally; dv <= 128 only
#         (the d256 kernels are base's). Session 12's first try of this (s12_pvwait.patch) read 0.86-0.97, with
#         ptxas's artefacts this version removes (SASS checked: issue stretch 66 instructions / 225 cycles, main
#         62 / 232; no R2UR added; no C75xx; spills as main)
#   ctrl  base again
# Predictions: w0 within +-2% (the maxima's overlap is short); top: up if the first try's loss was the artefacts,
# down like the first try if running the exponentials beside their own register-A P V is what costs.
# bench/sm90r_ab.py (cuDNN beside), d 64 / 128 / 256, causal and not, 512 / 2k / 8k / 16k, two passes.
# Run as of commit abac273 (later commits change the defaults it compares against).
#   bash bench/integration/s12_next.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12n
tree_copy /tmp/s12n-w0
sed -i 's/ptx::wgmma_wait_group<1>();  \/\/ S(n) done; P V still running/ptx::wgmma_wait_group<0>();/' \
  /tmp/s12n-w0/src/cuda/sm90/consumer.h
log "w0: $(grep -c 'wgmma_wait_group<1>' /tmp/s12n-w0/src/cuda/sm90/consumer.h) wait_group 1 left (expect 0)"
tree_copy /tmp/s12n-top bench/integration/s12_pvwait2.patch
dims="64;128;256"
PY_DIMS=$dims sm90_build_py base "" 5 300 &
(cd /tmp/s12n-w0 && PY_DIMS=$dims sm90_build_py w0 "" 5 300) &
(cd /tmp/s12n-top && PY_DIMS=$dims sm90_build_py top "-DFLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=1" 5 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,w0,top,ctrl 64,128,256 0,1 512,2048,8192,16384 40 240
sm90_ab p2 ctrl,top,w0,base 64,128,256 0,1 512,2048,8192,16384 40 240
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base w0 top ctrl | tee -a "$out/summary.txt"
log total
