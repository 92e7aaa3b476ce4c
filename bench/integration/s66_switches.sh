#!/usr/bin/env bash
# Session 66: d = 256's two consumer switches at d = 192 / (192, 128), where they were never measured: SCORE_ORDER
# (consumer 1 issues its score GEMMs after consumer 0's; 0.976-0.999x the time at d256, s62_order.sh) and
# OWN_FIRST (each consumer's own 32 rows' dV / dK from registers before the barrier of both; 0.958-1.005x at
# d256, s63_own_first.sh), each off against the tree (both on). The main kernel's top stall at 192x128 causal
# 16k is the barrier (s66_stalls.sh). Predicted: both off slower or level (as at d256).
#   bash bench/integration/s66_switches.sh
# Run (session 66, 6f2d62a): the tree (both on) against each off, time ratio tree / variant over 192x128 and d192,
# 2k and 16k, causal and not: SCORE_ORDER off 0.980-1.022 (level); OWN_FIRST off 0.969-1.002 (on is up to 3%
# faster, at 16k). Both stay on. Records: s66_switches_summary.txt, s66_switches_so0.jsonl,
# s66_switches_of0.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s66w
PY_DIMS=192 sm90_build_py new "" 5 200 -DFLASHATTN_BACKWARD=ON &
PY_DIMS=192 sm90_build_py so0 "-DFLASHATTN_SM90_BWD_D256_SCORE_ORDER=0" 5 200 -DFLASHATTN_BACKWARD=ON &
PY_DIMS=192 sm90_build_py of0 "-DFLASHATTN_SM90_BWD_D256_OWN_FIRST=0" 5 200 -DFLASHATTN_BACKWARD=ON &
wait
for variant in so0 of0; do
  (PYTHONPATH=$bld/pyroot timeout 80 python3 bench/backward_compare.py --base-package "flashattn_$variant" \
    --hdims 192x128,192 --seqlens 2048,16384 --rounds 2 --settle-ms 100 --check-max-seqlen 2048 \
    --backends cuda_sm90 --base-backends cuda_sm90 >"$out/$variant.jsonl" 2>"$out/$variant.err")
  log "$variant rc=$? $(grep -v Warning "$out/$variant.err" | tail -1 | cut -c1-200)"
  python3 bench/backward_ab_table.py "$out/$variant.jsonl" >>"$out/summary.txt"
done
log total
