#!/usr/bin/env bash
# Session 14 (issue 6), a measurement for the next session's choice: what K/V multicast is worth now. Session 13
# estimated causal multicast at <= 1% from the +1-3% non-causal multicast measured in session 6; the d128 kernels
# have changed since (the row maxima off the path). Builds (d128 bf16): base (main: clusters with K/V multicast for
# non-causal from 2k keys) and nomc (FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0: never), a control; non-causal 2k-16k
# (where the builds differ) and causal 8k / 16k (the same kernel in both: the noise), three passes beside cuDNN.
# Also gives the causal overhead against equal work per tile: causal 16k (64.5 key blocks per tile on average)
# against non-causal 8k (64) without multicast.
# Prediction: nomc 0.97-0.99 non-causal (multicast +1-3%).
#   bash bench/integration/s14_mc.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s14m
PY_DIMS=128 sm90_build_py base "" 8 300 &
PY_DIMS=128 sm90_build_py nomc "-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0" 8 300 &
wait
sm90_ctrl_copy
for pass in "p1 base,nomc,ctrl" "p2 ctrl,nomc,base" "p3 nomc,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 128 0 2048,4096,8192,16384 50 150
  sm90_ab "$1" "$2" 128 1 8192,16384 50 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base nomc ctrl | tee -a "$out/summary.txt"
log total
