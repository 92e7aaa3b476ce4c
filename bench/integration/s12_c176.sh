#!/usr/bin/env bash
# Session 12 (issue 6): the K/V multicast kernel (d128 non-causal from 2k keys) with FlashAttention 3's 176-key
# blocks (FLASHATTN_SM90_CLUSTER_KEY_BLOCK_N=176; session 11 measured 176 keys only without multicast).
#   base  the tree's defaults; c176  CLUSTER_KEY_BLOCK_N=176; ctrl  base again
# bench/sm90r_ab.py (cuDNN beside), d128 non-causal 2k / 4k / 8k / 16k, two passes (orders reversed).
#   bash bench/integration/s12_c176.sh
set -uo pipefail
out=/tmp/s12c-out
bld=/tmp/s12c-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld/pyroot"
trap 'cp "$out/summary.txt" "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null' EXIT
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin
PY_DIMS=128 sm90_build_py base "" 8 300 &
PY_DIMS=128 sm90_build_py c176 "-DFLASHATTN_SM90_CLUSTER_KEY_BLOCK_N=176" 8 300 &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
ab() {  # ab PASS BUILDS
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/sm90r_ab.py --builds "$2" --hdims 128 \
    --causal 0 --seqlens 2048,4096,8192,16384 --rep 60 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/ab.jsonl"
  log "ab $1"
}
ab p1 base,c176,ctrl
ab p2 ctrl,c176,base
ab p3 base,c176,ctrl
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base c176 ctrl | tee -a "$out/summary.txt"
log total
