#!/usr/bin/env bash
# Session 33: the top key block's P V at its visible width in the 80-key d256 kernels (s33_narrow_top_d256.patch,
# FLASHATTN_SM90_NARROW_TOP=1: the first key-block step peeled off the loop, gemm_pv_top issuing only the k-steps of
# the keys the consumer's rows see; P = 0 past them). At the grid's lengths the top block of a non-causal tile holds
# 64 / 48 / 16 / 32 of its 80 keys at 1k / 2k / 4k / 8k, so 1 / 2 / 4 / 3 of its five P V k-steps go: 0.77% of the
# tensor work at 1k-4k, 0.29% at 8k; causal 8k / 16k (the multicast instance) save per consumer and tile what the
# diagonal leaves out. The per-tile cost: the branch's dummy HGMMA.64x8x16 and the peeled step's code.
# Builds base (this tree) and narrow (the patch), d256 bf16; a control copy of base; bench/build_check.py on ragged
# and causal shapes first; 400 ms stints with cuDNN interleaved, two passes: non-causal 1k / 2k / 4k / 8k, causal
# 8k / 16k. Prediction: narrow +0.3..+0.7% at 1k-4k, within noise at 8k and causal.
# One H200 call (~6 minutes).
#   bash bench/integration/s33_narrow.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s33n
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
tree_copy "$bld/narrow-tree" bench/integration/s33_narrow_top_d256.patch
PY_DIMS=256 sm90_build_py base "" 8 300 &
(cd "$bld/narrow-tree" && PY_DIMS=256 sm90_build_py narrow "" 8 300) &
wait
rm -f "$out"/py_*_configure.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot timeout 150 python3 bench/build_check.py --builds base,narrow --hdims 256 \
  --shapes 1000:1000:0,1024:1024:0,2048:2048:0,4096:4096:0,777:3000:0,8192:8192:0,4200:4200:1,8192:8192:1 \
  >"$out/check.txt" 2>&1
rc=$?
log "build_check rc=$rc $(grep -c '^ok' "$out/check.txt") ok, $(grep -c '^FAIL' "$out/check.txt") FAIL"
[[ $rc == 0 ]] || exit 1
rm -f "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows base,ctrl,narrow 256 0 1024,2048,4096,8192 "p$pass" 400 110
  sustained_rows base,ctrl,narrow 256 1 8192,16384 "p$pass" 400 70
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ctrl narrow | sed -n '/^sustained/,$p' |
  tee -a "$out/summary.txt"
log total
