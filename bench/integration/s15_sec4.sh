#!/usr/bin/env bash
# Session 15 (issue 6), on the commit that adds this script:
#  1. ncu (locked clocks) of the split tail (s15_split_tail.patch, taken off main after s15_split2.sh read it neutral
#     at free clocks) against main at d128 non-causal 16k and d256 non-causal 8k: does it remove the last round's
#     idle SMs where the clock cannot rise (prediction: -2..-3% kernel time, the SM active cycles' avg / max)?
#  2. d256 causal with L2 sections of a quarter of L2 ("sec4": FLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4; half
#     before), 2k / 4k / 8k (16k: one head per section either way): s15_l2.sh's kvh0 diagnostic read d256 causal
#     4k +3.4% with every head's K/V in L2 (control -2.8%), and ncu reads 347 MB from DRAM there against 206 MB for
#     non-causal 2k. Session 8 measured quarter sections -3..-8% at 4k on that day's kernel. Predicted: within
#     +-2%; kept for d256 only if every row is above the control.
#   bash bench/integration/s15_sec4.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s15u
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "${OUT:-/tmp}/" 2>/dev/null' EXIT
tree_copy /tmp/s15-split bench/integration/s15_split_tail.patch
PY_DIMS="128;256" sm90_build_py base "" 5 400 &
PY_DIMS=256 sm90_build_py sec4 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4" 4 400 &
(cd /tmp/s15-split && PY_DIMS="128;256" sm90_build_py split "" 5 400) &
wait
PYTHONPATH=$bld/pyroot timeout 150 ncu --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 128:0:16384,256:0:8192 \
  --builds base,split >"$out/ncu_split.csv" 2>"$out/ncu_err.txt"
log "ncu rc=$?"
python3 - "$out/ncu_split.csv" <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
his = [i for i, r in enumerate(rows) if r and r[0] == "ID"]
for r in rows[his[0] + 2:] if his else []:
    d = dict(zip(rows[his[0]], r))
    print(d["Kernel Name"][:60], d["gpu__time_duration.sum"], d["sm__cycles_active.avg"], d["sm__cycles_active.max"])
PY
sm90_ctrl_copy
for pass in "p1 base,sec4,ctrl" "p2 ctrl,sec4,base" "p3 sec4,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "$2" 256 1 2048,4096,8192 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base sec4 ctrl | tee -a "$out/summary.txt"
log total
