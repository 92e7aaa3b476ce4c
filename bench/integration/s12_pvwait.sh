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
#   bash bench/integration/s12_pvwait.sh
set -uo pipefail
out=/tmp/s12pv-out
bld=/tmp/s12pv-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld/pyroot"
trap 'cp "$out/summary.txt" "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null' EXIT
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin
PY_DIMS="64;128;256" sm90_build_py base "-DFLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=0 -DFLASHATTN_SM90_K_AHEAD_OF_V=0" 6 330 &
PY_DIMS="64;128;256" sm90_build_py new "" 6 330 &
PY_DIMS="64;128;256" sm90_build_py kv "-DFLASHATTN_SM90_PV_WAIT_AT_LOOP_TOP=0" 6 330 &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
ab() {  # ab PASS BUILDS HDIMS SEQLENS
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 260 python3 bench/sm90r_ab.py --builds "$2" --hdims "$3" \
    --causal 0,1 --seqlens "$4" --rep 40 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/ab.jsonl"
  log "ab $1 $3"
}
ab p1 base,new,kv,ctrl 64,128,256 512,1024,2048,4096,8192,16384
ab p2 ctrl,kv,new,base 64,128 512,2048,8192,16384
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new kv ctrl | tee -a "$out/summary.txt"
log total
