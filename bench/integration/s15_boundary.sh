#!/usr/bin/env bash
# Session 15, fourth device call (issue 6), on the commit that adds this script: what the d128 tile boundary
# costs. s15_ncu.sh (ncu, locked clocks): non-causal 4k runs 5% slower per FLOP than 16k with the same tile count
# (2048) and 3.5% more instructions, i.e. ~1.6 key blocks of time per tile boundary; FA3's 4k / 16k is 0.996.
# DIAGNOSTIC builds (wrong results by design), d128 only:
#  - "qstale" (s15_qstale.patch): after a CTA's first tile the producer completes q_full without loading Q (the
#    buffer's old Q stands in): the Q load's latency taken off the boundary;
#  - "noepi" (s15_noepi.patch): kernels with their own O buffer write no O (no stmatrix, fence, barrier, store);
#  - "both".
# Predicted: if Q's arrival is the boundary's cost (session 6's profile at 512), qstale +2-4% at 1k-4k, ~0 at 16k;
# noepi +1-2% at 1k-4k.
#   bash bench/integration/s15_boundary.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
out=/tmp/s15d-out bld=/tmp/s15a-build
rm -rf "$out" && mkdir -p "$out" "$bld/pyroot"
device_call_begin
trap 'cp "$out/summary.txt" "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null' EXIT
[[ -d $bld/pyroot/flashattn_base ]] || PY_DIMS=128 sm90_build_py base "" 6 400 &
tree_copy /tmp/s15-qstale bench/integration/s15_qstale.patch
tree_copy /tmp/s15-noepi bench/integration/s15_noepi.patch
tree_copy /tmp/s15-both bench/integration/s15_qstale.patch
(cd /tmp/s15-both && patch -p1 -s <"$OLDPWD/bench/integration/s15_noepi.patch")
(cd /tmp/s15-qstale && PY_DIMS=128 sm90_build_py qstale "" 4 400) &
(cd /tmp/s15-noepi && PY_DIMS=128 sm90_build_py noepi "" 3 400) &
(cd /tmp/s15-both && PY_DIMS=128 sm90_build_py both "" 3 400) &
wait
sm90_ctrl_copy
for pass in "p1 base,qstale,noepi,both,ctrl" "p2 ctrl,both,noepi,qstale,base" "p3 qstale,base,ctrl,both,noepi"; do
  set -- $pass
  sm90_ab "$1" "$2" 128 0 1024,2048,4096,16384 60 150
  sm90_ab "$1" "$2" 128 1 4096 60 100
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base qstale noepi both ctrl | tee -a "$out/summary.txt"
log total
