#!/usr/bin/env bash
# Session 12 (issue 6): the key-block loop's P V wait at the top of the next iteration (consumer.h finish_pv,
# FLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP) and the producer's K loads one block ahead of V (producer.h,
# FLASHATTN_SM90_K_AHEAD_OF_V). One device call: Python extensions (90a, bf16, d 64 / 128 / 256, forward)
#   base  both 0 (cubins identical to 67238c7)
#   new   the tree's defaults (both 1)
#   kv    K ahead of V alone
#   ctrl  base's extension again
# (Run 1, with the loop-top wait alone and the old producer order: 0.86-0.97 of base at d64 / d128, see
#  docs/kernel-notes-sm90.md session 12.)
# bench/sm90r_ab.py (cuDNN beside) over the standard grid's 36 forward rows, then a second pass (order reversed)
# over the d128 rows.
#   bash bench/integration/s12_pvwait.sh   (the switches are in s12_pvwait.patch, on 67238c7; not on main)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12pv
PY_DIMS="64;128;256" sm90_build_py base "-DFLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=0 -DFLASHATTN_SM90_K_AHEAD_OF_V=0" 6 330 &
PY_DIMS="64;128;256" sm90_build_py new "" 6 330 &
PY_DIMS="64;128;256" sm90_build_py kv "-DFLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=0" 6 330 &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,new,kv,ctrl 64,128,256 0,1 512,1024,2048,4096,8192,16384 40 260
sm90_ab p2 ctrl,kv,new,base 64,128 0,1 512,2048,8192,16384 40 260
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new kv ctrl | tee -a "$out/summary.txt"
log total
