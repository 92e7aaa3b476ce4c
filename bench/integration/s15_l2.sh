#!/usr/bin/env bash
# Session 15, third device call (issue 6), on the commit that adds this script. s15_ncu.sh found (ncu, locked
# clocks) d256 causal 16k as fast as non-causal 8k (1.651 vs 1.659 ms) but reading 965 MB from DRAM against 247 MB
# (cuDNN: 201 MB = Q + K + V once; L2 hit 84 vs 98%); at free clocks the causal row reads 0.92-0.95 of non-causal
# 8k. The key blocks are walked last first, so every tile of a head touches the whole head's K/V from its start.
# Is the DRAM traffic what the causal rows lose at free clocks?
#  - "kvh0": DIAGNOSTIC (wrong results by design; s15_kvh0.patch): every head's tiles load head 0's K/V, which then
#    stays in L2: the most that any tile order could give;
#  - "sec1": FLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=1 (d64 / d256 sections of all of L2 instead of half).
# Predicted: if DRAM traffic is the loss, kvh0 lifts d256 causal 16k by 4-8% and leaves non-causal within 1%.
# Then ncu DRAM reads of d128 / d64 causal 16k and d128 non-causal 16k (base).
#   bash bench/integration/s15_l2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
out=/tmp/s15c-out bld=/tmp/s15a-build
rm -rf "$out" && mkdir -p "$out" "$bld/pyroot"
device_call_begin
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/*.csv "${OUT:-/tmp}/" 2>/dev/null' EXIT
[[ -d $bld/pyroot/flashattn_base ]] || PY_DIMS="64;128;256" sm90_build_py base "" 8 400 &
tree_copy /tmp/s15-kvh0 bench/integration/s15_kvh0.patch
(cd /tmp/s15-kvh0 && PY_DIMS="64;128;256" sm90_build_py kvh0 "" 6 400) &
PY_DIMS="64;256" sm90_build_py sec1 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=1" 4 400 &
wait
sm90_ctrl_copy
for pass in "p1 base,X,ctrl" "p2 ctrl,X,base" "p3 X,base,ctrl"; do
  set -- $pass
  sm90_ab "$1" "${2/X/kvh0,sec1}" 256 1 4096,16384 60 150
  sm90_ab "$1" "${2/X/kvh0,sec1}" 256 0 8192 60 100
  sm90_ab "$1" "${2/X/kvh0,sec1}" 64 1 16384 60 100
  sm90_ab "$1" "${2/X/kvh0}" 128 1 16384 60 100
  sm90_ab "$1" "${2/X/kvh0}" 128 0 16384 60 100
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base kvh0 sec1 ctrl | tee -a "$out/summary.txt"
for spec in "base 128:1:16384,64:1:16384,128:0:16384,256:1:16384" "sec1 64:1:16384,256:1:16384"; do
  set -- $spec
  PYTHONPATH=$bld/pyroot timeout 120 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows "$2" --builds "$1" \
    >"$out/ncu_dram_$1.csv" 2>"$out/ncu_err_$1.txt"
done
log "ncu rc=$?"
python3 - "$out"/ncu_dram_*.csv <<'PY' | tee -a "$out/summary.txt"
import csv, sys
for path in sys.argv[1:]:
    rows = list(csv.reader(open(path)))
    his = [i for i, r in enumerate(rows) if r and r[0] == "ID"]
    for r in rows[his[0] + 2:] if his else []:
        d = dict(zip(rows[his[0]], r))
        print(path[-12:], d["Kernel Name"][:30], d["gpu__time_duration.sum"], d["dram__bytes_read.sum"],
              d["lts__t_sector_hit_rate.pct"])
PY
log total
