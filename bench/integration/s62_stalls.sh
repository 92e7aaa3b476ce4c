#!/usr/bin/env bash
# Session 62, last call: where the d = 256 main kernel's warps wait (ncu's stall reasons per issued
# instruction, no clock control), beside the dQ pass's, at non-causal 16k: neither shared-memory reads
# (s62_gradsplit.sh), L2 traffic (s62_multicast.sh) nor issuing the next scores early (s62_pipelined.sh)
# moved the main kernel (522 TFLOP/s against the dQ pass's 681). For the next session's design; no change.
#   bash bench/integration/s62_stalls.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s62h
PY_DIMS=256 sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 200 ncu --clock-control none --kernel-name 'regex:backward_(dq_)?kernel' \
  --launch-count 2 --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum' \
  python3 "$OLDPWD/bench/backward_kernel_times.py" --hdims 256 --seqlens 16384 >"$out/stalls.txt" 2>"$out/stalls.err")
log "ncu rc=$? $(tail -1 "$out/stalls.err" | cut -c1-200)"
grep -E "backward_|stalled|pipe_tensor|inst_executed" "$out/stalls.txt" | grep -vE " 0(\.0+)?$" |
  sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | cut -c1-150 >>"$out/summary.txt"
log total
