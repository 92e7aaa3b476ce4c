#!/usr/bin/env bash
# Session 32 (issue 6): (1) bench/rounds_probe.py: what the last, partial round of the persistent schedule costs
# on the standard grid (7.76 / 15.52 rounds of 132 CTAs at d256 / d128; 3.88 / 7.76 rounds of causal couples),
# the same kernels timed on grid shapes and on shapes of whole rounds (batch 1, more heads), cuDNN beside; (2)
# two d256 causal schedules at 4k not read before: the 80-key kernel on placement clusters (b80p4:
# D256_BLOCK64_MAX_SEQLEN_MASKED=2048; session 26 read 80-key blocks at 4k only with the multicast or without
# placement) and the 64-key kernel on the dynamic longest-first schedule (b64dyn: PLACEMENT_MAX_SEQLEN=2048),
# paired and in 400 ms stints beside base.
# Prediction: (1) whole / grid 1.01-1.02 for ours (3% if the idle SMs gave nothing back; the power cap returns
# part); (2) b80p4 0.98-1.00 at causal 4k (placement +~1% against 64-key blocks' +2% at 2k), b64dyn 0.97-1.00.
# Result (s32_rounds_summary.txt, s32_rounds.jsonl): whole / grid for ours d128 non-causal 16k / 8k / 4k 0.971 /
# 1.047 / 1.027, d256 non-causal 1k / 8k 0.992 / 0.999, causal 4k / 2k 1.046 / 1.011, d128 causal 16k 1.001
# (cuDNN 0.979-1.023); three-round medians of 300 ms stints, which s32_alloc.sh later put at +-1.5% for one input
# (the per-stint clock wanders under the cap). Stints at causal 4k: b80p4 0.989, b64dyn 0.995 of base (control
# 0.999); paired at 2k all within 0.1%. Neither kept.
# One H200 call (~5 minutes).
#   bash bench/integration/s32_rounds.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s32r
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="128;256" sm90_build_py base "" 6 300 &
PY_DIMS=256 sm90_build_py b80p4 "-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=2048" 5 300 &
PY_DIMS=256 sm90_build_py b64dyn "-DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=2048" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/build_check.py --builds base,b80p4,b64dyn --hdims 256 \
  >"$out/check.txt" 2>&1
rc=$?
log "build_check rc=$rc $(grep -c '^ok' "$out/check.txt") ok, $(grep -c '^FAIL' "$out/check.txt") FAIL"
[[ $rc == 0 ]] || exit 1
PYTHONPATH=$bld/pyroot:bench PYTHONUNBUFFERED=1 timeout 200 python3 bench/rounds_probe.py --build base \
  >"$out/rounds.jsonl" 2>"$out/rounds.err"
log "rounds probe rc=$?"
tail -3 "$out/rounds.err" >>"$out/summary.txt"
paired_passes base,ctrl,b80p4,b64dyn 256 1 2048,4096 3 80
for pass in 1 2; do
  sustained_rows base,ctrl,b80p4,b64dyn 256 1 4096 "p$pass" 400 70
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ctrl b80p4 b64dyn | tee -a "$out/summary.txt"
log total
