#!/usr/bin/env bash
# Session 47 (issue 6): where the narrow decode tile's time goes now (ncu, base clocks): s45_ncu.py's decode shapes
# (GQA 32/8, d128, bf16: 1k / 4k / 16k keys at batch 1, 4k at batch 4) through flash_attn_with_kvcache,
# flash_attn_func and SDPA's cuDNN, every kernel's duration, DRAM throughput and bytes, and the forward kernels'
# warp stall reasons.
# Prediction: our forward kernel at 16k keys b1 ~60-70% of DRAM peak against cuDNN's ~75%; long-scoreboard (TMA
# waits) the top stall.
#   bash bench/integration/s47_ncu.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s47ncu
sm90_build_py new "" 16 300
PYTHONPATH=$bld/pyroot timeout 240 ncu --csv --page raw --launch-skip 0 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,launch__grid_size \
  python3 bench/integration/s45_ncu.py >"$out/ncu.csv" 2>"$out/ncu.err"
log "ncu rc=$?"
python3 - "$out/ncu.csv" <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, units, data = rows[0], rows[1], rows[2:]
col = {n: i for i, n in enumerate(head)}
keep = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed", "launch__grid_size",
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
        "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
        "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio"]
print("# kernel | " + " | ".join(k.split("__")[1][:40] + " (" + units[col[k]] + ")" for k in keep))
for r in data:
    print(r[col["Kernel Name"]][:70], "|", " | ".join(r[col[k]] for k in keep))
PY
log total
