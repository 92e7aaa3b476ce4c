#!/usr/bin/env bash
# Session 66, last call: where the (192, 128) backward's time goes, for the next session's design (no change).
# (192, 128) causal reads 0.78-0.86x cuDNN while non-causal reads 1.16-1.21x, and balancing the consumers' columns
# did not help (s66_balanced.sh). 1. ncu kernel times (no clock control) of every kernel of a call, d192 and
# 192x128 at 4k and 16k, causal and not: the split between the main kernel and the dQ pass. 2. ncu stall reasons
# per issued instruction and tensor-pipe activity of both kernels at 192x128 causal 16k (as s62_stalls.sh at
# d256 non-causal 16k).
#   bash bench/integration/s66_stalls.sh
# Run (session 66, b699dc6): kernel times (ms, main kernel / dQ pass; the NVTX tags came back as "?",
# rows in the script's order): d192 4k full 2.148 / 1.253, causal 1.148 / 0.754; 16k full 8.384 / 4.772, causal
# 4.162 / 2.412; 192x128 4k full 1.868 / 1.181, causal 1.002 / 0.709; 16k full 7.256 / 4.496, causal 3.602 /
# 2.270. The dQ pass is 36-41% of a call; on their own GEMMs the main kernel reads 473-492 TFLOP/s at 16k full,
# the dQ pass 611-648. Stalls per issued instruction at 192x128 causal 16k: main kernel barrier 2.00, wait 1.41,
# long scoreboard 1.40, no instruction 1.08, short scoreboard 0.74, gmma 0.25, tensor pipe active 49.7%; dQ pass
# gmma 2.28, wait 1.92, long scoreboard 1.18, no instruction 1.14, mio throttle 0.77, barrier 0.03, tensor pipe
# 63.6%. cuDNN's whole call at 16k causal takes ~4.6 ms; our main kernel alone 3.6. Record:
# s66_stalls_summary.txt.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66s
PY_DIMS=192 sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
ncu_backward_times 192,192x128 4096,16384
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 150 ncu --clock-control none --kernel-name 'regex:backward_(dq_)?kernel' \
  --launch-count 2 --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum' \
  python3 "$OLDPWD/bench/backward_kernel_times.py" --hdims 192x128 --seqlens 16384 --causal 1 >"$out/stalls.txt" \
  2>"$out/stalls.err")
log "ncu rc=$? $(tail -1 "$out/stalls.err" | cut -c1-200)"
grep -E "backward_|stalled|pipe_tensor|inst_executed|gpu__time" "$out/stalls.txt" | grep -vE " 0(\.0+)?$" |
  sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | cut -c1-150 >>"$out/summary.txt"
log total
