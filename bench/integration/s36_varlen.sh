#!/usr/bin/env bash
# Session 36: where the varlen forward's time goes. s36_standing.sh found flashattn_varlen_func on eight 2048-token
# sequences 7-13% slower than the batched call on the same tensors (d128 non-causal 546 vs 622 TFLOP/s, causal 485 vs
# 524; d256 587 vs 671, causal 511 vs 568). Varlen launches differ in: per-sequence tensor maps (a prepare kernel,
# tensormap acquire fences per tile in the producer and the O store), the dynamic schedule in L2 sections of many
# heads where the batched unmasked rows take the static head-major order, and no next-tile Q prefetch. Builds,
# cumulative: new (the tree), hm (VARLEN_HEAD_MAJOR=1), hmnf (+ MEASURE_NO_MAP_ACQUIRE=1, measurement only),
# hmnfdh (+ DECODED_HANDOFF=2: consumers take the decoded tile, no SequenceInfo load of their own). Predictions: hm
# +3..+6% on the unmasked rows (session 8's head-major gains at 1k-2k), nothing causal; nf +1..+3% everywhere;
# dh within +-1%.
# Read here: bench/varlen_compare.py's table (varlen-s36v.md).
# Its switches are those of commit e1ade7c (MEASURE_NO_MAP_ACQUIRE and the register form of ACQUIRE_ONCE were removed
# afterwards; ACQUIRE_ONCE=1 in later trees is the shared-memory form): rerun it there.
# One H200 call (~5 minutes).
#   bash bench/integration/s36_varlen.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s36v
out=${OUT:-$out}
export PY_DIMS="128;256"
sm90_build_py new "" 16 200
sm90_build_py hm "-DFLASHATTN_SM90_VARLEN_HEAD_MAJOR=1" 16 200
sm90_build_py hmnf "-DFLASHATTN_SM90_VARLEN_HEAD_MAJOR=1 -DFLASHATTN_SM90_MEASURE_NO_MAP_ACQUIRE=1" 16 200
sm90_build_py hmnfdh "-DFLASHATTN_SM90_VARLEN_HEAD_MAJOR=1 -DFLASHATTN_SM90_MEASURE_NO_MAP_ACQUIRE=1 \
-DFLASHATTN_SM90_DECODED_HANDOFF=2" 16 200
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 300 python3 bench/varlen_compare.py --builds new,hm,hmnf,hmnfdh \
  --hdims 128,256 --no-sm80 --out "$out" --tag s36v >"$out/varlen.log" 2>&1
log "varlen rc=$?"
tail -22 "$out/varlen.log"
log total
