#!/usr/bin/env bash
# RAN in session 21 on a0a2779 (H200; s21_kv_hint_*): evict-last 1.000 of normal with the same DRAM bytes, evict-first
# 0.95. The switch was removed afterwards (5f7915c): run it on a0a2779's tree.
# PREPARED in session 20, not run: the L2 eviction priority of the K/V loads (forward_config.h
# FLASHATTN_SM90_KV_L2_HINT; producer.h load_kv_box). Session 15 bounded what a perfect L2 would give on the
# rows that read the most from DRAM (every head reading head 0's K/V): d256 causal 4k +3.4%, 16k +1.3%, d64
# causal 16k +2.4%, d128 causal 16k +0.5%. Builds: base (normal), last (K/V evict-last, FlashAttention 3's
# choice), first (evict-first), a control copy of base. Local SASS (session 20): the hinted UTMALDG carry a
# policy descriptor, +8..16 instructions per kernel, spills as base, default cubins identical. Prediction: last
# +0.5-2% on the causal d256 / d64 rows from 4k (fewer DRAM bytes: ncu below), ~1.00 elsewhere; first <= 1.00
# on the grid and ~1.00 on the decode (K/V read once). Ask for an H200.
#   bash bench/integration/s21_kv_hint.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s21k
out=${OUT:-$out} # results straight to $OUT: a call cut off at its limit still brings back what it measured
PY_DIMS="64;128;256" sm90_build_py base "" 5 400 &
PY_DIMS="64;128;256" sm90_build_py last "-DFLASHATTN_SM90_KV_L2_HINT=1" 5 400 &
PY_DIMS="64;128;256" sm90_build_py first "-DFLASHATTN_SM90_KV_L2_HINT=2" 5 400 &
wait
sm90_ctrl_copy
PYTHONPATH=$bld/pyroot timeout 120 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py \
  --rows 256:1:4096,256:1:16384,64:1:16384,128:1:16384 --builds base,last,first >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
for pass in "p1 base,last,first,ctrl" "p2 ctrl,first,last,base"; do
  set -- $pass
  for d in 256 64 128; do
    sm90_ab "$1" "$2" $d 1 2048,4096,8192,16384 60 100
    sm90_ab "$1" "$2" $d 0 4096,8192,16384 60 100
  done
  decode_ab "$1" "$2"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base last first ctrl | tee -a "$out/summary.txt"
log total
