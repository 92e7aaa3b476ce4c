#!/usr/bin/env bash
# Session 13 (issue 6): why the P V wait at the loop top (s12_pvwait2.patch, "top") read 0.94-0.97 of base at d128
# in s13_next.sh although it shortens the consumer warp's static chain. DIAGNOSTIC builds beside base, d128 only:
#   top     s12_pvwait2.patch + FLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=1 (the exponentials overlap their own P V;
#           O rescaled unconditionally)
#   topnr   top without the unconditional O rescale (wrong results where a reference moves: timing only)
#   basess  base with the P V GEMM's A operand read from shared memory (the V stage) instead of P's registers
#           (s13_pvss.patch, FLASHATTN_DIAG_PV_SS; wrong results; ptxas drops the P conversions)
#   topss   top with the same shared-memory A operand
#   ctrl    base again
# Hypothesis: the register-A P V GEMM and the warp's own exponentials compete (the tensor core reads P from the
# warp's registers while the warp runs its softmax at full rate). Predictions if it holds: topss / basess > 1
# while top / base < 1; if not: topss / basess ~ top / base. topnr / top says what the unconditional rescale costs.
# Run as of commit 88c6e72 (later commits change the defaults it compares against).
#   bash bench/integration/s13_diag.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s13d
tree_copy /tmp/s13d-top bench/integration/s12_pvwait2.patch
tree_copy /tmp/s13d-topnr bench/integration/s12_pvwait2.patch
sed -i 's/^        for (int j = 0; j < kO; ++j) o\[j\] \*= correction\[(j \/ 2) % 2\];$/        \/\/ topnr: no rescale/' \
  /tmp/s13d-topnr/src/cuda/sm90/consumer.h
log "topnr: $(grep -c 'topnr: no rescale' /tmp/s13d-topnr/src/cuda/sm90/consumer.h) rescale loop removed (expect 1)"
tree_copy /tmp/s13d-basess bench/integration/s13_pvss.patch
tree_copy /tmp/s13d-topss bench/integration/s12_pvwait2.patch
(cd /tmp/s13d-topss && patch -p1 -s <"$OLDPWD/bench/integration/s13_pvss.patch") && log "topss patched"
top="-DFLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=1"
PY_DIMS=128 sm90_build_py base "" 3 300 &
(cd /tmp/s13d-top && PY_DIMS=128 sm90_build_py top "$top" 3 300) &
(cd /tmp/s13d-topnr && PY_DIMS=128 sm90_build_py topnr "$top" 3 300) &
(cd /tmp/s13d-basess && PY_DIMS=128 sm90_build_py basess "-DFLASHATTN_DIAG_PV_SS=1" 3 300) &
(cd /tmp/s13d-topss && PY_DIMS=128 sm90_build_py topss "$top -DFLASHATTN_DIAG_PV_SS=1" 3 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,top,topnr,basess,topss,ctrl 128 0,1 2048,8192,16384 40 200
sm90_ab p2 ctrl,topss,basess,topnr,top,base 128 0,1 2048,8192,16384 40 200
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base top topnr basess topss ctrl | tee -a "$out/summary.txt"
log total
