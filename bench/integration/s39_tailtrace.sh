#!/usr/bin/env bash
# Session 39 (issue 6): s39_tailcost.sh read the split tail's loss as time, not power (ncu, clocks locked: d128 2k
# 502.7 -> 515.9 us with the tail, d256 1k 249.2 -> 272.0 us): a fixed ~25-40 us per call where the tail should have
# saved 8-16 us. Two suspects, both in this call:
#  - the combine waiting on L2 latency (few loads in flight): the combine now taking its own piece from registers and
#    loading the other records in batches (t1new, HEAD) against the old one (t1old, s39_oldcombine.patch) and no
#    tail (t0), under ncu (d128 2k / 4k) and in 400 ms stints beside cuDNN (2k / 4k / 16k, two passes);
#  - anything else: a CLI build with a trace (s39_tailtrace.patch: the global timer at each tile's and piece's
#    start, epilogue and end, the record's write and arrival, per consumer warpgroup, into the workspace), read by
#    bench/tail_trace.py at d128 2k / 4k / 16k.
# Prediction: if the combine is the cost, t1new at 2k reads at or above t0 and the trace shows the epilogues of split
# pieces (P -> E) near a static tile's; otherwise the trace says where the tail's time goes.
# Runs as recorded on 6f192ff..f3c055c (HEAD then had the batched combine); on later trees t1new is session 38's
# combine and s39_oldcombine.patch does not apply.
# One H200 call (~4 minutes).
#   bash bench/integration/s39_tailtrace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39r
tree_copy "$bld/old-tree" bench/integration/s39_oldcombine.patch
tree_copy "$bld/trace-tree" bench/integration/s39_tailtrace.patch
PY_DIMS=128 sm90_build_py t0 "-DFLASHATTN_SM90_SPLIT_TAIL=0" 4 300 &
PY_DIMS=128 sm90_build_py t1new "-DFLASHATTN_SM90_SPLIT_TAIL=1" 4 300 &
(cd "$bld/old-tree" && PY_DIMS=128 sm90_build_py t1old "-DFLASHATTN_SM90_SPLIT_TAIL=1" 4 300) &
trace_cli_build "$bld/trace-tree" 4 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
trace_cli_runs tail_trace.py trace.txt --ctas 4
ncu_table 128:0:2048,128:0:4096 t0,t1old,t1new summary.txt
for pass in p1 p2; do
  sustained_rows t0,t1old,t1new 128 0 2048,4096,16384 "$pass" 400 120
  log "stints $pass"
done
sustained_summary t0 t1old t1new
cp "$out/ab.jsonl" "$out/trace.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
