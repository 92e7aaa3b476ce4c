#!/usr/bin/env bash
# Session 27, call 5: L2 section size for the d256 kernels, read in 400 ms stints (sm90r_ab.py --sustained, cuDNN
# interleaved). Session 16 found one-head sections halve the DRAM reads of d256 causal 8k (528 -> 259 MB) with no
# time change under do_bench (+-2% noise); session 21 found DRAM traffic paid in power at free clocks (evict-first
# K/V: 5-11% slower on causal rows), and session 26 that only sustained load shows energy gains. The rows below the
# FA3 anchor in the session 27 grids: d256 causal 4k (0.959-0.968), non-causal 1k (0.964-0.981) and 8k
# (0.974-0.976). Builds: new (half of L2 per section: 6 kv heads at 4k), o4 (a quarter), o8 (an eighth: one head
# from 4k). Prediction: o4 / o8 +1..+3% at causal 4k / 8k if the DRAM saving shows; +-1% on the non-causal rows.
# One H200 call (~4 minutes).
#   bash bench/integration/s27_sec256.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27o
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS=256 sm90_build_py new "" 5 300 &
PY_DIMS=256 sm90_build_py o4 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=4" 5 300 &
PY_DIMS=256 sm90_build_py o8 "-DFLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER=8" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
for pass in 1 2; do
  sustained_rows new,o4,o8 256 1 2048,4096,8192,16384 "p$pass" 400 100
  sustained_rows new,o4,o8 256 0 1024,8192 "p$pass" 400 60
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" new o4 o8 | sed -n '/^sustained/,$p' | tee -a "$out/summary.txt"
log total
