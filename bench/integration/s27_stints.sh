#!/usr/bin/env bash
# Prepared in session 26, not run: how long must a stint be for sm90r_ab.py --sustained to read what the grid reads?
# Session 26's 150 ms stints read ours / cuDNN at 1.13 / 1.23 / 1.19 (d128 non-causal 16k / causal 16k, d256 causal
# 8k) where grids read 1.10-1.11 / 1.14-1.16 / 1.13-1.17, and multicast on / off at 1.028-1.034 / 1.018-1.027 /
# 1.035-1.070: if the power limiter averages over more than a stint, part of the clock is still shared. Here the
# same rows with stints of 150, 400 and 1000 ms (new = the defaults, off = every K/V multicast off, cuDNN
# interleaved), two passes, then bench/compare.py's grid for d128 / d256 (two rounds) in the same call.
# Prediction: the ratios to cuDNN fall toward the grid's as the stints lengthen, on / off rises.
# One H200 call (~7 minutes).
#   bash bench/integration/s27_stints.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27t
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
off="-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0 -DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=0"
off+=" -DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=0"
PY_DIMS="64;128;256" sm90_build_py new "" 8 300 &
PY_DIMS="128;256" sm90_build_py off "$off" 6 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
for pass in 1 2; do
  for ms in 150 400 1000; do
    sustained_rows new,off 128 1,0 16384 "p$pass-$ms" "$ms" 90
    sustained_rows new,off 256 1 8192 "p$pass-$ms" "$ms" 60
    log "stints p$pass $ms ms"
  done
done
compare_grid 2 200
log total
