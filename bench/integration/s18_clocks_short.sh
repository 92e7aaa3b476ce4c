#!/usr/bin/env bash
# Session 18 (issue 6), DIAGNOSTIC on an H100 (kind nvidia-h100-x1): the H100 short rows where we trail cuDNN at
# free clocks (grid s18_h100_grid.sh: causal d256 / d128 / d64 512 0.936 / 0.945 / 0.951, non-causal d128 512
# 0.982) but not at ncu's locked clocks (s18_placement.sh: causal d128 512 124.0 us against cuDNN's 125.9). Do the
# two kernels run at different clocks (power), or does the same clock do less work per second (memory)?
#  1. bench/clock_phases.py: each kernel back to back for 2 s with nvidia-smi sampling the SM clock and power;
#  2. ncu with --clock-control none and with the default (base clocks): time, SM clock, DRAM bytes and
#     throughput, SM throughput, for ours and cuDNN.
# Prediction: at free clocks both run at about the same clock (the H100's short rows are not power-limited at
# 1980 MHz); under ncu --clock-control none ours is slower by the grid's ratio, with DRAM throughput a larger share
# of peak for both than at base clocks (memory-bound near 60-70%).
#   bash bench/integration/s18_clocks_short.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18ck
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "${OUT:-/tmp}/" 2>/dev/null' EXIT
PY_DIMS="64;128;256" sm90_build_py new "" 14 300 &
ncu --query-metrics --chip gh100 >"$out/metrics.txt" 2>&1
wait
rows=64:1:512,128:1:512,256:1:512,128:0:512,128:0:8192
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/clock_phases.py --rows "$rows" --builds new --cudnn \
  | tee "$out/clocks.jsonl"
log "clock phases rc=$?"
metrics="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum"
for m in dram__throughput sm__throughput; do
  if grep -qE "^$m[[:space:]]" "$out/metrics.txt"; then metrics+=",$m.avg.pct_of_peak_sustained_elapsed"; fi
done
for cc in none base; do
  PYTHONPATH=$bld/pyroot timeout 90 ncu --clock-control "$cc" --metrics "$metrics" --profile-from-start off --csv \
    --page raw python3 bench/ncu_grid_target.py --rows "$rows" --builds new --cudnn >"$out/ncu_$cc.csv" 2>"$out/ncu_err.txt"
  log "ncu clock-control $cc rc=$? $(tail -1 "$out/ncu_err.txt")"
done
log total
