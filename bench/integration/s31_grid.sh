#!/usr/bin/env bash
# Session 31: a second grid of the final tree (two rounds; grid-to-grid spread is +-2-3% per row, so the standing
# is read on the mean of grids), and beside it where the O-over-V prefetch goes: after the third (oov3) or fourth
# (oov4) key block against the default's second (new), paired, three passes, d256 non-causal 1k / 2k / 4k
# (s31_oov_prefetch.sh: after the first -0.6 / -0.3%, after the second +0.70 / +0.46% against none).
# Prediction: oov3 / oov4 within +-0.4% of new.
# One H200 call (~6 minutes).
#   bash bench/integration/s31_grid.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s31g
PY_DIMS="64;128;256" sm90_build_py new "" 8 300 &
PY_DIMS=256 sm90_build_py oov3 "-DFLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_O_OVER_V=3" 4 300 &
PY_DIMS=256 sm90_build_py oov4 "-DFLASHATTN_SM90_PREFETCH_AFTER_BLOCKS_O_OVER_V=4" 4 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy new
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/build_check.py --builds new,oov3,oov4 --hdims 256 \
  --shapes 1000:1000:0,2048:2048:0,777:3000:0,1024:1024:1 >"$out/check.txt" 2>&1
rc=$?
log "build_check rc=$rc $(grep -c '^ok' "$out/check.txt") ok, $(grep -c '^FAIL' "$out/check.txt") FAIL"
if [[ $rc == 0 ]]; then
  paired_passes new,ctrl,oov3,oov4 256 0 1024,2048,4096 3 120
  paired_summary new ctrl oov3 oov4
fi
compare_grid 2 200
(cd "$out" && tar -czf "${OUT:-/tmp}/grid.tgz" compare-*)
log total
