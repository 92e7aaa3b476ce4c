#!/usr/bin/env bash
# Session 36, on the device time left after final36.sh: a second reading of VARLEN_HEAD_MAJOR (now 1) against the
# former order (nohm: 0), the unmasked rows only (the switch leaves masked problems alone), five rounds of 400 ms
# stints. Prediction: nohm 0.97-0.99 of the tree on average, as s36_varlen2.sh read hm at +2% mean.
# One H200 call (~3.5 minutes).
#   bash bench/integration/s36_varlen3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s36x
out=${OUT:-$out}
export PY_DIMS="128;256"
sm90_build_py new "" 16 200
sm90_build_py nohm "-DFLASHATTN_SM90_VARLEN_HEAD_MAJOR=0" 16 200
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/varlen_compare.py --builds new,nohm \
  --hdims 128,256 --causal 0 --no-sm80 --sustained 5 --out "$out" --tag s36x >"$out/varlen.log" 2>&1
log "varlen rc=$?"
tail -11 "$out/varlen.log"
log total
