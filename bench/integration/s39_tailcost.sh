#!/usr/bin/env bash
# Session 39 (issue 6): where the split tail's cost goes where it loses. s38 read the d128 tail at 2k 0.995 / 0.966 of
# the tree without it, s39_tail256.sh the d256 one at 1k / 2k 0.943 / 0.968 of the control; the tail saves about half
# (d128) or a quarter (d256) of a unit's time per CTA, so its pieces would have to cost far more than their Q loads,
# pipeline starts and combines. This call: ncu (clocks locked: no power limit) of single launches, d128 non-causal
# 2k / 4k on t0 (SPLIT_TAIL=0) and t1 (=1), d256 non-causal 1k / 4k on base and tail (s39_tail256.patch, the code of
# b4e1c77, with SPLIT_TAIL_O_OVER_V=1): duration, DRAM and L2 bytes (the memset of the arrival counters is a kernel of
# its own there); then one pass of 400 ms stints of the same rows beside cuDNN.
# Prediction: if the loss is the tail's own time, t1 / tail read slower than t0 / base under ncu too at 2k / 1k; if it
# is the power limiter's (s39 reading), they read faster there.
# s39_tail256.patch applies to this script's own tree (244d29b); later trees need that commit checked out.
# One H200 call (~4 minutes).
#   bash bench/integration/s39_tailcost.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s39c
tree_copy "$bld/tail-tree" bench/integration/s39_tail256.patch
PY_DIMS=128 sm90_build_py t0 "-DFLASHATTN_SM90_SPLIT_TAIL=0" 4 300 &
PY_DIMS=128 sm90_build_py t1 "-DFLASHATTN_SM90_SPLIT_TAIL=1" 4 300 &
PY_DIMS=256 sm90_build_py base "" 4 300 &
(cd "$bld/tail-tree" && PY_DIMS=256 sm90_build_py tail "-DFLASHATTN_SM90_SPLIT_TAIL_O_OVER_V=1" 4 300) &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second"
ncu_table 128:0:2048,128:0:4096 t0,t1 ncu.txt "$metrics"
ncu_table 256:0:1024,256:0:4096 base,tail ncu.txt "$metrics"
sustained_rows t0,t1 128 0 2048,4096 p1 400 80
sustained_rows base,tail 256 0 1024,4096 p1 400 80
log "stints"
python3 bench/integration/ab_summary.py "$out/ab.jsonl" t0 t1 | sed -n '/^sustained/,$p' >>"$out/summary.txt"
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base tail | sed -n '/^sustained/,$p' >>"$out/summary.txt"
cp "$out/ab.jsonl" "$out/ncu.txt" "${OUT:-/tmp}/" 2>/dev/null
log total
