#!/usr/bin/env bash
# Session 12 (issue 6): the K/V multicast kernel (d128 non-causal from 2k keys) with FlashAttention 3's 176-key
# blocks (FLASHATTN_SM90_CLUSTER_KEY_BLOCK_N=176; session 11 measured 176 keys only without multicast).
#   base  the tree's defaults; c176  CLUSTER_KEY_BLOCK_N=176; ctrl  base again
# bench/sm90r_ab.py (cuDNN beside), d128 non-causal 2k / 4k / 8k / 16k, three passes (the middle one reversed).
# The switch FLASHATTN_SM90_CLUSTER_KEY_BLOCK_N is not on main: it is in s12_pvwait.patch (its forward_config.h /
# forward_launch.h hunks), which applies on 67238c7.
#   bash bench/integration/s12_c176.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12c
PY_DIMS=128 sm90_build_py base "" 8 300 &
PY_DIMS=128 sm90_build_py c176 "-DFLASHATTN_SM90_CLUSTER_KEY_BLOCK_N=176" 8 300 &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,c176,ctrl 128 0 2048,4096,8192,16384 60 150
sm90_ab p2 ctrl,c176,base 128 0 2048,4096,8192,16384 60 150
sm90_ab p3 base,c176,ctrl 128 0 2048,4096,8192,16384 60 150
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base c176 ctrl | tee -a "$out/summary.txt"
log total
