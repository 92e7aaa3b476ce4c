#!/usr/bin/env bash
# Session 36, after s36_varlen.sh: its do_bench readings of one build moved 5-10% between calls (the equal mix at
# d128 non-causal read varlen / batched 546 / 622 in s36_standing.sh, 630 / 595 there), so the builds go again in
# 400 ms stints (bench/varlen_compare.py --sustained 4: interleaved, each at its own load; FA2's varlen kernel and
# the batched call in the interleave, cuDNN's ragged path read once). Builds: new (the tree), hm
# (VARLEN_HEAD_MAJOR=1), hmnf (+ MEASURE_NO_MAP_ACQUIRE=1: what every tensormap fence costs, measurement only),
# hmao (hm + ACQUIRE_ONCE=1: the producer acquires a sequence's maps once per run of its tiles). Predictions: hm
# +1..+4% on the unmasked rows, 0 causal; hmao within 1% of hmnf, both +0.5..+2% over hm on the short mix (most
# tiles per FLOP), less elsewhere; varlen within 2% of the batched call on the equal mix.
# Read here: varlen-s36w.md (speedups against new in the JSON rows' sustained_speedup).
# Its switches are those of commit e1ade7c (MEASURE_NO_MAP_ACQUIRE and the register form of ACQUIRE_ONCE were removed
# afterwards; ACQUIRE_ONCE=1 in later trees is the shared-memory form): rerun it there.
# One H200 call (~6.5 minutes).
#   bash bench/integration/s36_varlen2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s36w
out=${OUT:-$out}
export PY_DIMS="128;256"
sm90_build_py new "" 16 200
sm90_build_py hm "-DFLASHATTN_SM90_VARLEN_HEAD_MAJOR=1" 16 200
sm90_build_py hmnf "-DFLASHATTN_SM90_VARLEN_HEAD_MAJOR=1 -DFLASHATTN_SM90_MEASURE_NO_MAP_ACQUIRE=1" 16 200
sm90_build_py hmao "-DFLASHATTN_SM90_VARLEN_HEAD_MAJOR=1 -DFLASHATTN_SM90_ACQUIRE_ONCE=1" 16 200
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 330 python3 bench/varlen_compare.py --builds new,hm,hmnf,hmao \
  --hdims 128,256 --no-sm80 --sustained 4 --out "$out" --tag s36w >"$out/varlen.log" 2>&1
log "varlen rc=$?"
tail -20 "$out/varlen.log"
log total
