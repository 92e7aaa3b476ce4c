#!/usr/bin/env bash
# Session 32 (issue 6): where d256 causal 4k's extra L2 traffic comes from. s32_layout.sh (ncu, one launch): ours 2.63
# GB through L2 and 7.3 M fabric sectors against cuDNN's 2.33 GB and 6.1 M; the problem's own K/V, Q and O are ~2.35
# GB. This call: ncu of the grid shape with L2 sectors by source unit and operation (the candidate names filtered
# against ncu --query-metrics, as s17_l2_short.sh did), on base and on pf0 (PREFETCH_NEXT_TILE=0: the masked 64-key
# kernels without the next tile's Q prefetch into L2), cuDNN beside; and rounds_probe.py --log-stints once (the tool
# now times through sm90r_ab.time_sustained) on one group.
# Prediction: the prefetch accounts for ~70 MB (64 MB of Q) of the 280 MB; the rest reads (K/V loaded twice?).
# Result (s32_l2.txt): base / pf0 / cuDNN 465 / 465 / 582 us; L2 sectors 82.2 / 79.6 / 73.7 M, of them SM reads
# 70.9 / 70.9 / 65.8 M (2.27 / 2.27 / 2.11 GB: ours the problem's K/V + Q, cuDNN 160 MB less), fabric 7.29 / 6.31 /
# 6.14 M. The Q prefetch is 2.6 M sectors (82 MB) and most of the fabric excess, at no time cost in one launch (and
# 1.006 in stints, s32_stints256.sh). The probe's check ran (two allocations, two stints: 704.6 / 641.9, the spread
# of two-stint medians).
# One H200 call (~2.5 minutes).
#   bash bench/integration/s32_l2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s32c
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS=256 sm90_build_py base "" 8 300 &
PY_DIMS=256 sm90_build_py pf0 "-DFLASHATTN_SM90_PREFETCH_NEXT_TILE=0" 8 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
ncu --query-metrics --chip gh100 >"$bld/metrics.txt" 2>&1
want="gpu__time_duration lts__t_bytes dram__bytes_read dram__bytes_write lts__t_sectors_op_read lts__t_sectors_op_write
lts__t_sectors_op_atom lts__t_sectors_op_red lts__t_sectors_srcunit_tex lts__t_sectors_srcunit_tex_op_read
lts__t_sectors_srcunit_tex_op_write lts__t_sectors_srcunit_ltcfabric lts__t_sectors_srcnode_gpc
lts__t_sectors_lookup_hit lts__t_sectors_lookup_miss lts__t_sectors"
metrics=""
for m in $want; do
  if grep -qE "^${m}[[:space:]]" "$bld/metrics.txt"; then metrics+="${metrics:+,}$m.sum"; else log "no metric $m"; fi
done
PYTHONPATH=$bld/pyroot:bench timeout 120 ncu --metrics "$metrics" --profile-from-start off --csv --page raw \
  python3 bench/ncu_grid_target.py --rows 256:1:4096 --builds base,pf0 --cudnn >"$bld/ncu.csv" 2>"$bld/ncu_err.txt"
log "ncu rc=$? $(tail -1 "$bld/ncu_err.txt")"
python3 - "$bld/ncu.csv" "$metrics" >"$out/l2.txt" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
idx = {h: j for j, h in enumerate(rows[0])}
print("d256 causal 4k (4 x 8), one launch each: base, pf0, cuDNN")
for r in rows[2:]:
    print(r[idx["Kernel Name"]][:24])
    for m in sys.argv[2].split(","):
        print(f"  {m} = {r[idx[m]]}")
PY
PYTHONPATH=$bld/pyroot:bench PYTHONUNBUFFERED=1 timeout 60 python3 bench/rounds_probe.py --build base --rounds 2 \
  --log-stints --sweep "256:1:4096:4x8@5/4x8@5" >"$out/probe_check.jsonl" 2>"$out/probe_check.err"
log "probe check rc=$?"
log total
