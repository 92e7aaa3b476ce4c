#!/usr/bin/env bash
# Session 16 (issue 6), a measurement on an H100 (kind nvidia-h100-x1), on the commit that adds this script: the
# causal rows at 512 / 1k keys, where the H100 standing (final16.sh, compare-20261127-201853) has us at 0.89 / 0.96
# of cuDNN at d256 (0.98 / 1.00 on the H200 of session 15) and 0.95-0.97 at d64 / d128 512. Short causal rows move
# 256 MB of Q, K, V and O in ~120 us (2 TB/s; the H100's HBM3 is 3.35 TB/s, the H200's 4.8), so the question is
# whether we move more bytes than cuDNN: ncu time, DRAM read / write bytes and L2 hit rate for base and cuDNN at
# d256 causal 512 / 1k, d128 and d64 causal 512; then a free-clock A/B base / sc (FLASHATTN_SM90_STATIC_COUPLES=1) /
# ctrl beside cuDNN on those rows, two passes.
# Prediction: DRAM bytes within 10% of cuDNN's (both near 256 MB at 512), i.e. not the cause; sc within +-3%.
#   bash bench/integration/s16_h100_short.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s16h
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="64;128;256" sm90_build_py base "" 8 300 &
PY_DIMS="64;128;256" sm90_build_py sc "-DFLASHATTN_SM90_STATIC_COUPLES=1" 8 300 &
wait
PYTHONPATH=$bld/pyroot timeout 90 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__grid_size \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py \
  --rows 256:1:512,256:1:1024,128:1:512,64:1:512 --builds base --cudnn >"$out/ncu.csv" 2>/dev/null
log "ncu rc=$?"
sm90_ctrl_copy
for pass in "p1 base,sc,ctrl" "p2 ctrl,sc,base"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 512,1024 60 100
  sm90_ab "$1" "$2" 128 1 512 60 100
  sm90_ab "$1" "$2" 64 1 512 60 100
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base sc ctrl | tee -a "$out/summary.txt"
log total
