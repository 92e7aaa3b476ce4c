#!/usr/bin/env bash
# Session 67: where cuda_sm90's dropout backward spends its time (s67_bits.sh: 1.9-2.3x the time of the plain
# kernel at d64, 1.6x at d128, while SDPA's cuDNN loses 0.8x and its FA2 0.85x). ncu over the main kernel at
# d64 / d128 4k non-causal, three variants each: plain, the general kernel with nothing to modify (ALiBi
# slopes of 0: what the general path costs by itself) and dropout 0.1: time, instructions issued, stall
# reasons per issued instruction, tensor pipe and the integer / FMA pipes' activity.
#   bash bench/integration/s67_stalls.sh
# Run (868963e; s67_stalls_summary.txt): d128 plain 2.26 ms, 0.54 G instructions, tensor pipe 65%; general
# with nothing to modify 3.21 ms, 1.06 G, 46%; dropout 4.23 ms, 1.57 G, 35%. d64 (the plain call on three
# consumers) 3.02 / 5.10 / 7.04 ms, 0.99 / 1.95 / 2.98 G. The general path's per-element run-time tests cost
# as much as dropout's Philox: both addressed in s67_general.sh.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67s
PY_DIMS="64;128" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 200 ncu --clock-control none --kernel-name 'regex:backward_kernel' \
  --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__pipe_(tensor_op_hmma|alu|fma|fmaheavy|fmalite|shared|xu)_cycles_active.avg.pct_of_peak_sustained_active,regex:sm__inst_executed_pipe_(alu|fma|fmaheavy|xu|uniform|lsu)\.sum,smsp__inst_executed.sum,gpu__time_duration.sum' \
  python3 "$OLDPWD/bench/backward_kernel_times.py" --hdims 64,128 --seqlens 4096 --causal 0 \
  --variants plain,general,dropout >"$out/stalls.txt" 2>"$out/stalls.err")
log "ncu rc=$? $(tail -1 "$out/stalls.err" | cut -c1-200)"
grep -E "backward_|stalled|pipe_|inst_executed|gpu__time" "$out/stalls.txt" | grep -vE " 0(\.0+)?$" |
  sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | cut -c1-150 >>"$out/summary.txt"
cuobjdump -sass "$bld/py-new"/python/_C*.so 2>/dev/null | awk '/Function : .*backward_kernel.*Li128E.*Lb0ELb1E/{f=1} f&&/Function : /&&!/Li128E.*Lb0ELb1E/{f=0} f' |
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9.]+' | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 |
  tr '\n' ' ' | sed 's/^/d128 general SASS opcodes: /' >>"$out/summary.txt"
log total
