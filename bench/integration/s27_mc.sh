#!/usr/bin/env bash
# Session 27, call 2: three K/V multicast variants in 400 ms stints (sm90r_ab.py --sustained, cuDNN interleaved).
# Session 27's first call (s27_stints.sh) read stints of 150 / 400 / 1000 ms alike against the grid at d128
# non-causal 16k and d256 causal 8k (ours / cuDNN 1.11 / 1.19-1.21 in every length, the grid 1.11 / 1.18), and the
# multicast on / off at 1.006-1.014 / 1.031-1.063 there. The multicast switches that earlier sessions turned down
# by do_bench were never read in stints:
#   mc256: the unmasked d256 multicast (KV_MULTICAST_D256, session 17: 0.968-1.010 against a control at
#          0.995-1.022) from 1024 keys; the d256 non-causal 1k / 8k rows are below the FA3 anchor (0.956 / 0.977,
#          mean of five grids);
#   b64mc: the new masked cluster instance of the 64-key d256 kernel (KV_MULTICAST_D256_BLOCK64_CAUSAL) from
#          2048 keys; d256 causal 4k is below the anchor (0.964);
#   mc64:  the d64 three-consumer multicast (KV_MULTICAST_D64, session 18: 0.990 against a control at 1.019) at
#          16k (8k has an odd query-block count).
# Prediction: mc256 +1..+3% from 4k if the energy reading carries over, b64mc +1..+2% at causal 4k, mc64 +-1%.
# One H200 call (~5 minutes).
#   bash bench/integration/s27_mc.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27m
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="64;256" sm90_build_py new "" 4 300 &
PY_DIMS="256" sm90_build_py mc256 "-DFLASHATTN_SM90_KV_MULTICAST_D256=1024" 4 300 &
PY_DIMS="256" sm90_build_py b64mc "-DFLASHATTN_SM90_KV_MULTICAST_D256_BLOCK64_CAUSAL=2048" 4 300 &
PY_DIMS="64" sm90_build_py mc64 "-DFLASHATTN_SM90_KV_MULTICAST_D64=2048" 4 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows new,b64mc 256 1 2048,4096 "p$pass" 400 60
  sustained_rows new,mc256 256 0 1024,2048,4096,8192,16384 "p$pass" 400 120
  sustained_rows new,mc64 64 0 16384 "p$pass" 400 40
  log "stints p$pass"
done
for b in mc256 b64mc mc64; do
  python3 bench/integration/ab_summary.py "$out/ab.jsonl" new "$b" | sed -n '/^sustained/,$p' | grep -v "^\S* *$" |
    tee -a "$out/summary.txt"
done
log total
