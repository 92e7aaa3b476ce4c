#!/usr/bin/env bash
# Session 32 (issue 6): DYNAMIC_TAIL_ROUNDS (new; default 0, default SASS identical): the static schedules of one
# CTA per claim (equal tiles; static couples on placement clusters) end with claims instead of strides, so that a
# slow CTA (s32_stints256.sh: d256 causal 4k 624-649 TFLOP/s over three seeds of iid inputs, cuDNN flat) no longer
# sets the makespan. dt1: the last round claimed, dt2: the last two. Builds base / dt1 / dt2 (d128 + d256) and the
# tests + CLI with dt1; float64-checked CLI runs of shapes with several rounds (the claims run only there; every
# output row poisoned before the call), racecheck on two of them; then 400 ms stints with cuDNN interleaved (d256
# causal 1k / 2k / 4k, non-causal 1k / 4k, d128 non-causal 1k: the rows of those schedules), two passes, and the
# seed lottery of d256 causal 4k on base and dt1.
# Prediction: dt1 +0.5..+2% at d256 causal 2k / 4k, +-0.5% elsewhere; the lottery's spread narrower with dt1.
# Ran on bea5372 (the switch removed after, 5018a6a). Result (s32_tail_summary.txt): every CLI run passed
# (float64, no NaN left), racecheck clean on both shapes; stints dt1 / dt2 against base: d256 causal 1k 0.987 /
# 0.980, 2k 1.007 / 0.991, 4k 0.997 / 1.006, non-causal 1k 0.988 / 0.990, 4k 1.003 / 0.999, d128 non-causal 1k
# 0.992 / 0.990 (control 0.994-1.017). Lottery, seeds 67 / 68 / 32: base 632.4 / 660.3 / 661.7, dt1 627.6 / 656.1
# / 657.1. Not kept.
# One H200 call (~7 minutes).
#   bash bench/integration/s32_tail.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s32d
dt1="-DFLASHATTN_SM90_DYNAMIC_TAIL_ROUNDS=1"
test_cli_build "128;256" "bf16" 6 "$dt1" &
PY_DIMS="128;256" sm90_build_py base "" 4 300 &
PY_DIMS="128;256" sm90_build_py dt1 "$dt1" 3 300 &
PY_DIMS="128;256" sm90_build_py dt2 "-DFLASHATTN_SM90_DYNAMIC_TAIL_ROUNDS=2" 3 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
cli_or_stop "--head-dim 256 --causal --seqlen-q 4096 -b 4 --heads 8 --heads-kv 8" || exit 1
cli_runs "--head-dim 256 --causal --seqlen-q 2048 -b 4 --heads 8 --heads-kv 2" \
  "--head-dim 256 --causal --seqlen-q 1024 -b 16 --heads 8 --heads-kv 8" \
  "--head-dim 128 --seqlen-q 1024 -b 16 --heads 16 --heads-kv 16" \
  "--head-dim 256 --seqlen-q 1000 -b 16 --heads 8 --heads-kv 4" \
  "--head-dim 128 --seqlen-q 777 -b 40 --heads 8 --heads-kv 8"
cli_summary
for args in "--head-dim 256 --causal --seqlen-q 2048 -b 4 --heads 8 --heads-kv 8" \
  "--head-dim 128 --seqlen-q 512 -b 8 --heads 16 --heads-kv 16"; do
  # shellcheck disable=SC2086  # a list of options
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 "$bld/tests/tools/cli/flashattn" run \
    --backend cuda_sm90 --repeat 1 --verify sample $args >"$bld/race.txt" 2>&1
  log "racecheck [$args] rc=$? $(grep -m1 'SUMMARY' "$bld/race.txt")"
done
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot timeout 120 python3 bench/build_check.py --builds base,dt1,dt2 --hdims 128,256 \
  >"$out/check.txt" 2>&1
rc=$?
log "build_check rc=$rc $(grep -c '^ok' "$out/check.txt") ok, $(grep -c '^FAIL' "$out/check.txt") FAIL"
[[ $rc == 0 ]] || exit 1
for pass in 1 2; do
  sustained_rows base,ctrl,dt1,dt2 256 1 1024,2048,4096 "p$pass" 400 100
  sustained_rows base,ctrl,dt1,dt2 256 0 1024,4096 "p$pass" 400 80
  sustained_rows base,ctrl,dt1,dt2 128 0 1024 "p$pass" 400 50
  log "stints p$pass"
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base ctrl dt1 dt2 | sed -n '/^sustained/,$p' |
  tee -a "$out/summary.txt"
for build in base dt1; do
  PYTHONPATH=$bld/pyroot:bench PYTHONUNBUFFERED=1 timeout 100 python3 bench/rounds_probe.py --build $build \
    --rounds 3 --sweep "256:1:4096:4x8@67/4x8@68/4x8@32" >>"$out/lottery.jsonl" 2>"$bld/lottery.err"
  log "lottery $build rc=$? $(tail -1 "$bld/lottery.err")"
done
log total
