#!/usr/bin/env bash
# Session 11 (issue 6, the d128 long rows against FlashAttention 3's 176-key blocks), one device call.
# Python extensions (90a, bf16, d128, forward only):
#   base  the tree's defaults (non-causal >= 2k: the 128-key cluster kernel with K/V multicast), twice (ctrl)
#   nomc  FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0 (128-key blocks, no multicast): separates the two effects
#   k160  + LONG_KEY_BLOCK_N=160 (O keeps its own buffer)
#   k176  + LONG_KEY_BLOCK_N=176 (FA3's width for d128 non-causal; O in Q's buffer, no early next S)
# bench/sm90r_ab.py (cuDNN beside), d128 non-causal 4k / 8k / 16k and causal 8k / 16k, two passes (orders reversed).
#   bash bench/integration/s11_longkeys.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s11lk
nomc="-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0"
PY_DIMS=128 sm90_build_py base "" 4 300 &
PY_DIMS=128 sm90_build_py nomc "$nomc" 4 300 &
PY_DIMS=128 sm90_build_py k160 "$nomc -DFLASHATTN_SM90_LONG_KEY_BLOCK_N=160" 4 300 &
PY_DIMS=128 sm90_build_py k176 "$nomc -DFLASHATTN_SM90_LONG_KEY_BLOCK_N=176" 4 300 &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
ab() { sm90_ab "$1" "$2" 128 "$3" "$4" 60 150; }  # ab PASS BUILDS CAUSAL SEQLENS
ab p1 base,nomc,k160,k176,ctrl 0 4096,8192,16384
ab p1 base,nomc,k160,k176,ctrl 1 8192,16384
ab p2 ctrl,k176,k160,nomc,base 0 4096,8192,16384
ab p2 ctrl,k176,k160,nomc,base 1 8192,16384
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base nomc k160 k176 ctrl | tee -a "$out/summary.txt"
log total
