#!/usr/bin/env bash
# Session 18 (issue 6), EXPERIMENT on an H100 (kind nvidia-h100-x1): the next tile's first key blocks (K and V)
# fetched into L2 by the producer once the current tile's blocks are issued (forward_config.h
# FLASHATTN_SM90_PREFETCH_NEXT_KV, default 0). s18_stall_sites.sh found causal d256 512's consumers waiting on K's
# full barrier in 13.5% of the warp samples (8k: 2.6%), never on Q's. Builds (d128 / d256, bf16): base, kv2 (two
# blocks), kv4 (four: a whole 512-key tile at d256 is eight 64-key blocks, at d128 four), a control. A/B only (the
# switch is default-off and a prefetch changes no result; correctness runs come with a default).
# Prediction: kv2 / kv4 +1-4% at causal d256 512 and 1k, less at d128 512, within the control at non-causal 8k.
#   bash bench/integration/s18_prefetch_kv.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18kv
PY_DIMS="128;256" sm90_build_py base "" 5 300 &
PY_DIMS="128;256" sm90_build_py kv2 "-DFLASHATTN_SM90_PREFETCH_NEXT_KV=2" 5 300 &
PY_DIMS="128;256" sm90_build_py kv4 "-DFLASHATTN_SM90_PREFETCH_NEXT_KV=4" 5 300 &
wait
sm90_ctrl_copy
for pass in "p1 base,kv2,kv4,ctrl" "p2 ctrl,kv4,kv2,base" "p3 kv2,base,ctrl,kv4"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024 60 60
  sm90_ab "$1" "$2" 128 1 512 60 40
  sm90_ab "$1" "$2" 128 0 512,8192 60 60
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base kv2 kv4 ctrl | tee -a "$out/summary.txt"
log total
