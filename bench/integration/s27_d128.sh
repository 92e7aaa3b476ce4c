#!/usr/bin/env bash
# Session 27, call 3: two traffic levers for the d128 causal rows below the FA3 anchor (mean of five grids: causal
# 2k 0.984, 8k 0.994, 16k 0.983), read in 400 ms stints (sm90r_ab.py --sustained, cuDNN interleaved), the regime
# that sees energy (session 26); paired timing read both, which hides it:
#   mcc:  the causal K/V multicast from 2048 keys instead of 8192 (KV_MULTICAST_CAUSAL; session 16 by do_bench:
#         2k -1.4%, 4k +0.5%);
#   sec4: L2 sections of a quarter of L2 instead of an eighth (SECTION_L2_DIVISOR 4; session 26 paired: causal 4k
#         +1.6%, other rows -0.6..-1.1%). Non-causal d128 rows take one-head sections, so only causal rows move.
# Prediction: mcc +0.5..+1.5% at 4k, +-1% at 2k; sec4 +1..+2% at 4k, +-1% elsewhere.
# One H200 call (~4 minutes).
#   bash bench/integration/s27_d128.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27d
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
sm90_build_py new "" 5 300 &
sm90_build_py mcc "-DFLASHATTN_SM90_KV_MULTICAST_CAUSAL=2048" 5 300 &
sm90_build_py sec4 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR=4" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
for pass in 1 2 3; do
  sustained_rows new,mcc,sec4 128 1 2048,4096 "p$pass" 400 70
  sustained_rows new,sec4 128 1 8192,16384 "p$pass" 400 60
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" new mcc sec4 | sed -n '/^sustained/,$p' |
  tee -a "$out/summary.txt"
log total
