#!/usr/bin/env bash
# Session 62, for the next session (no change): ncu's stall reasons per issued instruction and tensor-pipe
# activity of the d64 and d128 backward main kernels (1k and 8k tokens, causal and not; the rows still below
# cuDNN: d64 0.84-0.97x, d128 0.85-0.98x at 512-2k), as s62_stalls.sh read the d256 kernels.
#   bash bench/integration/s62_stalls_d64_d128.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62j
PY_DIMS="64;128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 200 ncu --clock-control none --kernel-name 'regex:backward_kernel' \
  --launch-count 8 --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum' \
  python3 "$OLDPWD/bench/backward_kernel_times.py" --hdims 64,128 --seqlens 1024,8192 >"$out/stalls.txt" 2>"$out/stalls.err")
log "ncu rc=$? $(tail -1 "$out/stalls.err" | cut -c1-200)"
grep -E "backward_|stalled|pipe_tensor|inst_executed|time_duration" "$out/stalls.txt" | grep -vE " 0(\.0+)?$" |
  sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | cut -c1-150 >>"$out/summary.txt"
log total
